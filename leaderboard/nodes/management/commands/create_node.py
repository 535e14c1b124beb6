from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from leaderboard.nodes.models import Node
from leaderboard.nodes.services import NodeError, node_create, node_token_rotate


class Command(BaseCommand):
    help = "Create a node (or rotate its token with --rotate) and print or store its token."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--hardware", nargs="*", default=[], help="hardware classes it serves")
        parser.add_argument("--rotate", action="store_true", help="new token for an existing node")
        parser.add_argument(
            "--token-file", help="write the token here (mode 0600) instead of printing it"
        )

    def handle(self, *args, **opts):
        try:
            node = Node.objects.filter(name=opts["name"]).first()
            if node is not None and opts["rotate"]:
                key = node_token_rotate(node=node)
            else:
                node, key = node_create(name=opts["name"], hardware=opts["hardware"])
        except NodeError as exc:
            raise CommandError(str(exc)) from None
        if opts["token_file"]:
            path = Path(opts["token_file"])
            path.write_text(key + "\n")
            path.chmod(0o600)
            self.stdout.write(f"node {node.name}: token written to {path}")
        else:
            self.stdout.write(key)
