"""The `farm` command.

Each subcommand lives in the package it belongs to, as a module with `add_arguments(parser)` and
`run(args) -> int`; this file only lists them. Command modules must not import torch at import
time, so `farm --help` stays fast.

Exit codes: 0 the command did its job; 1 the farm itself failed (a bug, a dead server) or could
not measure a run; 2 wrong arguments or unusable input (the message says what to fix); 3 a remote
call was refused (auth, quota); 4 a wait timed out; `farm submit --wait` adds 5 (the kernel did
not pass on some run) and 6 (a run was REJECTED as gaming the evaluation). docs/client.md lists
the code of every outcome.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from farm.errors import FarmError

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "eval": (
        "farm.cli_eval",
        "evaluate a kernel file locally and write the result document",
    ),
    "pool": (
        "farm.cli_pool",
        "start, show or stop the warm evaluation daemon that serves `farm eval`",
    ),
    "sol": ("farm.sol_commands", "print the speed-of-light table of a suite on a hardware class"),
    "suite": ("farm.suite.commands", "verify, pin, import or export problem suites"),
    "problems": (
        "farm.suite.problems_command",
        "list the problems of a suite, or show one (`farm problems show NAME`)",
    ),
    "init": ("farm.suite.init_command", "write a starter submission for a problem"),
    "hardware": ("farm.hardware.commands", "list hardware classes and their peak figures"),
    "login": (
        "farm.client.commands.login",
        "store the server URL and API token for later commands",
    ),
    "submit": ("farm.client.commands.submit", "submit a kernel to a farm server"),
    "status": ("farm.client.commands.status", "show a submission's runs and results"),
    "runs": ("farm.client.commands.runs", "list your recent runs"),
    "cancel": ("farm.client.commands.cancel", "cancel runs that have not finished"),
    "rejudge": (
        "farm.client.commands.rejudge",
        "operators: run a board's entries again, report what changed, then apply it",
    ),
    "board": ("farm.client.commands.board", "show a leaderboard"),
    "export": ("farm.client.commands.export", "export results as flashinfer-trace traces"),
    "agent": ("agents.cli", "run a node agent that takes jobs for this machine's devices"),
    "up": ("farm.up", "run the whole farm locally in one command"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `only`, that command's arguments alone are loaded (the others are
    listed by name and help), so one command does not import every other's module."""
    parser = argparse.ArgumentParser(prog="farm", description="Kernel evaluation farm")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if only is not None and name != only:
            continue
        module = _load(module_name)
        if module is not None:
            module.add_arguments(p)
            p.set_defaults(_run=module.run)
        else:
            p.set_defaults(_run=_missing(name))
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(only=argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except FarmError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"  {exc.hint}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _load(module_name: str):
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            return None  # the command's package is not installed in this image
        raise


def _missing(name: str):
    def run(_args: argparse.Namespace) -> int:
        raise FarmError(
            f"`farm {name}` is not available in this installation",
            hint="install the full package (pip install kernel-farm[server,agent])",
        )

    return run


def _version() -> str:
    from farm import __version__

    return f"farm {__version__}"


if __name__ == "__main__":
    sys.exit(main())
