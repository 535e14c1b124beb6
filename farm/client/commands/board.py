"""`farm board PROBLEM --hw H`: the ranked entries of a leaderboard."""

from __future__ import annotations

import argparse

from farm.client.commands.common import (
    add_server_arguments,
    console,
    fmt_ms,
    fmt_score,
    make_client,
    write_json,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("problem", help="problem name")
    parser.add_argument("--hw", required=True, help="hardware class, e.g. nvidia-h100")
    parser.add_argument("--suite", default="core-v1", help="suite (default core-v1)")
    parser.add_argument("--json", metavar="OUT", help="write the board as JSON ('-' for stdout)")
    add_server_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from rich.table import Table

    board = make_client(args).board(args.problem, args.hw, suite=args.suite)
    if args.json:
        write_json(args.json, board.raw)
        return 0
    table = Table(title=f"{board.suite}/{board.problem} on {board.hardware}")
    table.add_column("#", justify="right")
    for col in ("user", "submission", "SOL score", "time", "SOL", "% SOL", "x eager"):
        table.add_column(col, justify="left" if col == "user" else "right")
    for e in board.entries:
        frac = "-" if e.fraction_of_sol is None else f"{100 * e.fraction_of_sol:.1f}%"
        speed = "-" if e.speedup_eager is None else f"{e.speedup_eager:.2f}x"
        table.add_row(
            f"{e.rank}{'=' if e.tied else ''}",
            e.user,
            str(e.submission),
            fmt_score(e.sol_score),
            fmt_ms(e.time_ms),
            fmt_ms(e.sol_ms),
            frac,
            speed,
        )
    out = console()
    out.print(table)
    if not board.entries:
        out.print("no entries yet")
    return 0
