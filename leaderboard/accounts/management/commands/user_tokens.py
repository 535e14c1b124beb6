"""`manage.py user_tokens NAME... --token-name T`: the named users (created when missing) each
get a fresh API token; prints one JSON line {"users": {name: key}} (the only time the keys are
shown). `--replace` revokes the users' earlier tokens of that name first, so that running it
again leaves one live token per user; `--password-file USER=PATH` gives a user created by this
call its web login password (read from the file, so it never shows in a process list); other new
users get an unusable password (API only)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.services import api_token_create, api_token_revoke


def user_file(text: str) -> tuple[str, Path]:
    user, sep, path = text.partition("=")
    if not (sep and user and path):
        raise argparse.ArgumentTypeError(f"expected USER=PATH, got {text!r}")
    return user, Path(path)


class Command(BaseCommand):
    help = "Create users if missing and print a fresh API token for each, as one JSON line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("usernames", nargs="+", metavar="USERNAME")
        parser.add_argument("--token-name", default="default", help="name of the new tokens")
        parser.add_argument(
            "--replace", action="store_true", help="revoke the users' live tokens of that name"
        )
        parser.add_argument(
            "--password-file",
            type=user_file,
            action="append",
            default=[],
            metavar="USER=PATH",
            help="web password of USER, if this call creates it (first line of PATH)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        passwords = dict(opts["password_file"])
        unknown = sorted(set(passwords) - set(opts["usernames"]))
        if unknown:
            raise CommandError(f"--password-file names a user not asked for: {unknown[0]}")
        keys = {}
        with transaction.atomic():
            for name in opts["usernames"]:
                keys[name] = self._token(name, passwords.get(name), opts)
        self.stdout.write(json.dumps({"users": keys}))

    def _token(self, name: str, password_file: Path | None, opts: dict[str, Any]) -> str:
        user, created = get_user_model().objects.get_or_create(username=name)
        if created:
            if password_file is not None:
                user.set_password(_first_line(password_file))
            else:
                user.set_unusable_password()
            user.save()
        if opts["replace"]:
            live = ApiToken.objects.filter(user=user, name=opts["token_name"], revoked_at=None)
            for token in live:
                api_token_revoke(token=token)
        return api_token_create(user=user, name=opts["token_name"])[1]


def _first_line(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CommandError(f"cannot read the password file {path}: {exc.strerror}") from None
    if not lines or not lines[0]:
        raise CommandError(f"the password file {path} is empty")
    return lines[0]
