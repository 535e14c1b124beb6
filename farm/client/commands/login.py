"""`farm login`: store the server URL and an API token in the config file (mode 0600).

The token comes from --token, else FARM_TOKEN, else it is made from --username and a password
(prompted on the terminal, or read from stdin with --password-stdin), else it is prompted for.
It is checked against the server before it is stored. Without a terminal nothing is prompted:
the error says which flag to pass.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from farm.errors import FarmError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="server URL (default: FARM_URL, then the stored one)")
    parser.add_argument("--token", help="API token (default: FARM_TOKEN, else prompted)")
    parser.add_argument("--username", help="create a new token with this user's password")
    parser.add_argument("--profile", help="store in this profile instead of the main config")
    parser.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the --username password from stdin (for scripts: no terminal needed)",
    )
    parser.add_argument(
        "--no-check", action="store_true", help="store without checking it against the server"
    )


def run(args: argparse.Namespace) -> int:
    from farm.client import FarmClient
    from farm.client.config import config_load, config_write, env_token

    url = args.url or config_load(profile=args.profile).url
    token = args.token or env_token()
    if not token and args.username:
        password = _password(args, url)
        token = FarmClient(url, "").token_create(username=args.username, password=password)
    if not token:
        token = _prompt(
            f"API token for {url} (create one at {url}/api/tokens/): ",
            hint="pass --token, set FARM_TOKEN, or --username with --password-stdin",
        )
    token = token.strip()
    if not token:
        raise FarmError("the token is empty", hint="pass --token or --username")
    if not args.no_check:
        FarmClient(url, token).token_check()
    path = config_write(url=url, token=token, profile=args.profile)
    print(f"logged in to {url}; token stored in {path} (mode 0600)")
    return 0


def _password(args: argparse.Namespace, url: str) -> str:
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise FarmError("--password-stdin: stdin held no password", hint="pipe it in")
        return password
    return _prompt(
        f"password for {args.username} at {url}: ",
        hint="pass --password-stdin (e.g. `farm login --username U --password-stdin < pw`)",
    )


def _prompt(question: str, *, hint: str) -> str:
    """Ask on the terminal without echo; a FarmError (exit 2) when there is no terminal."""
    if not sys.stdin.isatty():
        raise FarmError("no terminal to ask on (stdin is not a terminal)", hint=hint)
    try:
        return getpass.getpass(question)
    except EOFError:
        raise FarmError("no answer was typed", hint=hint) from None
