"""`manage.py create_node NAME... --hardware CLASS...`: create nodes (or give existing ones a
fresh token with --rotate) and print their tokens, stored in a file (--token-file, one node) or
as one JSON line {"nodes": {name: token}} (--json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from leaderboard.nodes.models import Node
from leaderboard.nodes.services import NodeError, node_create, node_token_rotate


class Command(BaseCommand):
    help = "Create nodes (or rotate their tokens with --rotate) and print or store the tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("names", nargs="+", metavar="NAME")
        parser.add_argument("--hardware", nargs="*", default=[], help="hardware classes it serves")
        parser.add_argument("--rotate", action="store_true", help="new token for an existing node")
        out = parser.add_mutually_exclusive_group()
        out.add_argument(
            "--token-file", type=Path, help="write the token here (mode 0600), one node only"
        )
        out.add_argument("--json", action="store_true", help='print {"nodes": {name: token}}')

    def handle(self, *args: Any, **opts: Any) -> None:
        names: list[str] = opts["names"]
        if opts["token_file"] and len(names) > 1:
            raise CommandError("--token-file takes one node; use --json for several")
        try:
            with transaction.atomic():
                keys = {name: self._token(name, opts) for name in names}
        except NodeError as exc:
            raise CommandError(str(exc)) from None
        if opts["json"]:
            self.stdout.write(json.dumps({"nodes": keys}))
        elif opts["token_file"]:
            path = opts["token_file"]
            path.write_text(keys[names[0]] + "\n")
            path.chmod(0o600)
            self.stdout.write(f"node {names[0]}: token written to {path}")
        else:
            self.stdout.write("\n".join(keys[name] for name in names))

    def _token(self, name: str, opts: dict[str, Any]) -> str:
        node = Node.objects.filter(name=name).first()
        if node is not None and opts["rotate"]:
            return node_token_rotate(node=node)
        return node_create(name=name, hardware=opts["hardware"])[1]
