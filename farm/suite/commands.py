"""`farm suite`: check and pin problem suites.

Each subcommand is an entry of SUBCOMMANDS (name -> help, add-arguments function, run
function), so a new one (`import`, `export`) is one more entry and two functions.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from farm.errors import SuiteError

DEFAULT_SUITE = "core-v1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach the `farm suite` subcommands to `parser`."""
    sub = parser.add_subparsers(dest="suite_command", metavar="SUBCOMMAND", required=True)
    for name, (help_text, add, run_fn) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add(p)
        p.set_defaults(_suite_run=run_fn)


def run(args: argparse.Namespace) -> int:
    """Run the chosen subcommand; return the process exit code."""
    return int(args._suite_run(args))


def _add_verify(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "suite",
        nargs="?",
        default=DEFAULT_SUITE,
        help=f"suite name or directory (default {DEFAULT_SUITE})",
    )


def run_verify(args: argparse.Namespace) -> int:
    """Check every file against the manifest and every problem against the format.

    Prints the suite hash on success (exit 0). Prints each differing file and exits 2 when the
    files do not match the manifest; a malformed problem raises SuiteError (also exit 2).
    """
    from farm.suite import loader, manifest

    root = loader.find_suite(args.suite)
    differences = manifest.differences(root)
    if differences:
        for line in differences:
            print(f"error: {line}", file=sys.stderr)
        print(
            f"  suite {root.name} does not match its manifest; restore the pinned files, "
            f"or review the change and pin a new version with `farm suite pin {root}`",
            file=sys.stderr,
        )
        return 2
    _load_all(root)
    print(manifest.read_hash(root))
    return 0


def _add_pin(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", type=Path, help="suite directory to (re)pin")


def run_pin(args: argparse.Namespace) -> int:
    """Validate every problem under DIR, then write its manifest and print the new hash.

    The rule for changing a suite (docs/problem-format.md, "Pinning"): a suite whose hash has
    been released (recorded by any submission or result) is frozen. Pin in place only a suite no
    result names yet; any change to a released one — a workload, a tolerance, a reference, even
    a description — goes into the next version (core-v1 -> core-v2), pinned under its own name,
    so every recorded score keeps meaning what it meant when it was made.
    """
    from farm.suite import manifest

    root: Path = args.directory
    if not root.is_dir():
        raise SuiteError(f"{root}: not a directory", hint="pass the suite's directory")
    count = _load_all(root)
    suite_hash = manifest.write(root)
    print(suite_hash)
    print(f"pinned {root.name}: {count} problems", file=sys.stderr)
    return 0


def _load_all(root: Path) -> int:
    """Load and validate every problem under `root` (uncached); return how many there are."""
    from farm.suite import loader

    problem_dirs = sorted(p.parent for p in root.glob(f"*/{loader.PROBLEM_FILE}"))
    if not problem_dirs:
        raise SuiteError(f"{root}: no */{loader.PROBLEM_FILE} found", hint="is this a suite?")
    for directory in problem_dirs:
        loader.load_problem(directory, label=f"{root.name}/")
    return len(problem_dirs)


def _add_import(parser: argparse.ArgumentParser) -> None:
    from farm.suite.importers.commands import add_import_arguments

    add_import_arguments(parser)


def _run_import(args: argparse.Namespace) -> int:
    from farm.suite.importers.commands import run_import

    return run_import(args)


Subcommand = tuple[
    str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]
]

SUBCOMMANDS: dict[str, Subcommand] = {
    "verify": (
        "check a suite's files against its manifest and print its hash",
        _add_verify,
        run_verify,
    ),
    "pin": ("write a suite's manifest (a new suite version) and print its hash", _add_pin, run_pin),
    "import": (
        "import KernelBench, GPU MODE or flashinfer-trace problems as a pinned suite",
        _add_import,
        _run_import,
    ),
}
