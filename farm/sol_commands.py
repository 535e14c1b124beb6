"""`farm sol [SUITE] --hw CLASS [--json]`: the speed-of-light table of a suite on a class."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("suite", nargs="?", default="core-v1", help="suite name or directory")
    parser.add_argument(
        "--hw",
        required=True,
        metavar="CLASS",
        help="hardware class, e.g. nvidia-h100 (see `farm hardware`)",
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")


def run(args: argparse.Namespace) -> int:
    from farm.hardware.specs import get_spec
    from farm.sol import sol_table
    from farm.suite.loader import load_suite

    spec = get_spec(args.hw)
    suite = load_suite(args.suite)
    rows = sol_table(suite, spec)
    if args.json:
        doc = {
            "suite": {"name": suite.name, "hash": suite.hash},
            "hardware": spec.name,
            "rows": rows,
        }
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_table(rows, title=f"SOL of {suite.name} on {spec.name} ({spec.marketing_name})")
        if spec.launch_floor_s:
            print(
                f"T_SOL includes the {spec.launch_floor_s * 1e6:.3g} µs every kernel costs on "
                f"{spec.name} (bound 'overhead' where it is the largest term; docs/hardware.md)"
            )
    return 0


def _print_table(rows: list[dict[str, Any]], *, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for col in ("problem", "workload", "dtype", "unit"):
        table.add_column(col, no_wrap=True)
    for col in ("FLOPs", "bytes", "bound", "T_SOL µs"):
        table.add_column(col, justify="right", no_wrap=True)
    reasons: dict[str, str] = {}
    for r in rows:
        if r["supported"]:
            cells = [f"{r['flops']:.3g}", f"{r['bytes']:.3g}", r["bound"],
                     f"{r['sol_ms'] * 1e3:.3f}"]  # fmt: skip
        else:
            cells = ["-", "-", "unsupported", "-"]
            reasons.setdefault(r["problem"], r["reason"])
        table.add_row(r["problem"], r["workload"], r["dtype"], r["unit"], *cells)
    console = Console()
    if not console.is_terminal:
        console.width = 160  # piped output: don't squeeze numbers into 80 columns
    console.print(table)
    for problem, reason in reasons.items():
        console.print(f"unsupported {problem}: {reason}")
