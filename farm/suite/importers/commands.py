"""`farm suite import FORMAT DIR [--name SUITE] [--force]`."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from farm.errors import FarmError
from farm.suite.importers import FORMATS, IMPORTERS


def add_import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("format", choices=FORMATS, help="the source's format")
    parser.add_argument("directory", type=Path, help="folder holding the source's problems")
    parser.add_argument(
        "--name", help="suite name (default: <format>-<folder name>, e.g. kernelbench-KernelBench)"
    )
    parser.add_argument("--force", action="store_true", help="replace an existing suite")
    parser.add_argument("--dest", type=Path, help="write under this folder, not FARM_HOME/suites")


def run_import(args: argparse.Namespace) -> int:
    """Import, pin and report: prints the suite hash; skipped files are listed on stderr."""
    from farm.suite.importers import common
    from farm.suite.loader import user_suite_dir

    root: Path = args.directory
    if not root.is_dir():
        raise FarmError(f"{root}: not a directory", hint="pass the folder holding the problems")
    source = IMPORTERS[args.format]
    drafts, skipped = source.load().import_dir(root)
    name = args.name or f"{args.format}-{root.resolve().name}"
    dest = args.dest or user_suite_dir()
    try:
        suite_hash, not_loaded = common.write_suite(name, drafts, dest, force=args.force)
    except FarmError:
        _print_skipped(skipped)  # the reasons matter most when nothing imported
        missing = {m.group(1) for m in map(_MISSING.search, skipped) if m}
        if len(missing) == 1 and all(_MISSING.search(line) for line in skipped):
            module = missing.pop()
            raise FarmError(
                f"nothing imported from {root}: every problem imports `{module}`, "
                "which is not installed",
                hint=f"install {module}, then import again",
            ) from None
        raise
    skipped += not_loaded
    if source.has_solutions:
        out = dest.parent / "solutions" / name
        written, notes = source.load().convert_solutions(root, out)
        skipped += notes
        if written:
            print(f"{len(written)} solutions written as submission files to {out}", file=sys.stderr)
    _print_skipped(skipped)
    print(suite_hash)
    print(
        f"imported {len(drafts) - len(not_loaded)} problems into suite {name} at {dest / name}"
        + (f"; {len(skipped)} skipped" if skipped else ""),
        file=sys.stderr,
    )
    return 0


_MISSING = re.compile(r"No module named '([\w.]+)'")


def _print_skipped(skipped: list[str]) -> None:
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
