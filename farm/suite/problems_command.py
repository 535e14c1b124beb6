"""`farm problems`: list the problems of a suite as a table."""

from __future__ import annotations

import argparse
import sys

from farm.suite.commands import DEFAULT_SUITE

PIPE_WIDTH = 160


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach the `farm problems` arguments to `parser`."""
    parser.add_argument(
        "suite",
        nargs="?",
        default=DEFAULT_SUITE,
        help=f"suite name or directory (default {DEFAULT_SUITE})",
    )
    parser.add_argument("--category", help="only problems of this category")


def run(args: argparse.Namespace) -> int:
    """Print one row per problem: name, category, pass, workload count and dtypes."""
    from rich.console import Console

    from farm.errors import unknown
    from farm.suite import loader, manifest

    suite = loader.load_suite(args.suite, verify=False)
    problems = sorted(suite.problems.values(), key=lambda p: (p.category, p.name))
    if args.category:
        categories = {p.category for p in problems}
        if args.category not in categories:
            raise unknown("category", args.category, categories, f"suite {suite.name}")
        problems = [p for p in problems if p.category == args.category]
    pinned = not manifest.differences(suite.root) if suite.hash else False
    # Piped output gets a fixed width wide enough that no name wraps (greppable rows).
    width = None if sys.stdout.isatty() else PIPE_WIDTH
    Console(width=width).print(_table(suite.name, suite.hash, pinned, problems))
    return 0


def _table(name, suite_hash, pinned, problems):  # type: ignore[no-untyped-def]
    from rich.table import Table

    if suite_hash and pinned:
        state = f"pinned {suite_hash[:12]}"
    else:
        state = "NOT matching its manifest" if suite_hash else "not pinned"
    table = Table(title=f"{name} ({len(problems)} problems, {state})")
    for column in ("name", "category", "pass", "workloads", "dtypes"):
        table.add_column(column, justify="right" if column == "workloads" else "left")
    for p in problems:
        table.add_row(p.name, p.category, p.pass_, str(len(p.workloads)), ", ".join(p.dtypes))
    return table
