from django.core.management.base import BaseCommand, CommandError

from leaderboard.problems.services import suites_sync


class Command(BaseCommand):
    help = "Load every pinned suite (and the hardware classes) into the database; idempotent."

    def handle(self, *args, **options):
        suites, errors = suites_sync()
        for suite in suites:
            count = suite.problems.count()
            self.stdout.write(f"{suite.name}: {count} problems, hash {suite.hash}")
        if errors:
            raise CommandError("not loaded: " + "; ".join(errors))
