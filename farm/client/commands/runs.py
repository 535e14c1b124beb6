"""`farm runs`: your recent runs, newest first."""

from __future__ import annotations

import argparse

from farm.client.commands.common import add_server_arguments, console, make_client, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--problem", help="only this problem")
    parser.add_argument("--hw", dest="hardware", help="only this hardware class")
    parser.add_argument("--state", help="queued | claimed | running | done | failed | lost")
    parser.add_argument("--verdict", help="only this verdict, e.g. PASSED")
    parser.add_argument("--mode", help="only this mode")
    parser.add_argument("--limit", type=int, default=30, help="how many (default 30)")
    parser.add_argument("--json", metavar="OUT", help="write the runs as JSON ('-' for stdout)")
    add_server_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from farm.client.commands.tables import runs_table

    filters = {k: getattr(args, k) for k in ("problem", "hardware", "state", "verdict", "mode")}
    runs = make_client(args).runs(limit=args.limit, **filters)
    if args.json:
        write_json(args.json, [r.raw for r in runs])
        return 0
    if not runs:
        console(stderr=True).print("no runs match")
        return 0
    console().print(runs_table(runs, title="your runs"))
    return 0
