"""`farm board PROBLEM --hw H`: the ranked entries of a leaderboard, as the web board shows them:
a column per workload (the entry's time there and its fraction of SOL), the eager baseline and
SOL rows under them, `=` on a shared rank and `≈ copy of #N` on an entry whose source nearly
repeats an earlier public one (a flag only: the entry stays on the board)."""

from __future__ import annotations

import argparse
from typing import Any

from farm.client.commands.common import (
    add_server_arguments,
    console,
    fmt_ms,
    fmt_score,
    make_client,
    write_json,
)
from farm.client.types import Board, BoardEntry, WorkloadFigures

SUMMARY_COLUMNS = ("SOL score", "time", "SOL", "% SOL", "x eager", "x compile")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("problem", help="problem name")
    parser.add_argument("--hw", required=True, help="hardware class, e.g. nvidia-h100")
    parser.add_argument("--suite", default="core-v1", help="suite (default core-v1)")
    parser.add_argument(
        "--no-workloads", action="store_true", help="leave out the per-workload columns"
    )
    parser.add_argument("--json", metavar="OUT", help="write the board as JSON ('-' for stdout)")
    add_server_arguments(parser)


def run(args: argparse.Namespace) -> int:
    board = make_client(args).board(args.problem, args.hw, suite=args.suite)
    if args.json:
        write_json(args.json, board.raw)
        return 0
    workloads = [] if args.no_workloads else board.workload_ids()
    out = console()
    out.print(board_table(board, workloads))
    if not board.entries:
        out.print("no entries yet")
        return 0
    for line in legend(board, workloads):
        out.print(line, markup=False, highlight=False)
    return 0


def board_table(board: Board, workloads: list[str]) -> Any:
    """The board as a rich Table: summary columns, then one column per workload id."""
    from rich.table import Table

    table = Table(title=f"{board.suite}/{board.problem} on {board.hardware}")
    table.add_column("#", justify="right")
    table.add_column("user")
    table.add_column("submission", justify="right")
    for col in (*SUMMARY_COLUMNS, *workloads):
        table.add_column(col, justify="right")
    for e in board.entries:
        table.add_row(*_entry_cells(e), *(_workload_cell(e.workloads.get(w)) for w in workloads))
    if board.entries and workloads:
        first = board.entries[0].workloads
        filler = [""] * (1 + len(SUMMARY_COLUMNS))  # the submission and summary columns
        eager = [fmt_ms(first[w].eager_ms) if w in first else "-" for w in workloads]
        sol = [fmt_ms(first[w].sol_ms) if w in first else "-" for w in workloads]
        table.add_section()
        table.add_row("", "eager baseline", *filler, *eager)
        table.add_row("", "speed of light", *filler, *sol)
    return table


def _entry_cells(e: BoardEntry) -> list[str]:
    user = e.user
    if e.copy_of is not None:
        user += f"\n≈ copy of #{e.copy_of.submission} ({e.copy_of.user})"
    return [
        f"{'=' if e.tied else ''}{e.rank}",
        user,
        f"#{e.submission}",
        fmt_score(e.sol_score),
        fmt_ms(e.time_ms),
        fmt_ms(e.sol_ms),
        _percent(e.fraction_of_sol),
        _times(e.speedup_eager),
        _times(e.speedup_compile),
    ]


def _workload_cell(figures: WorkloadFigures | None) -> str:
    if figures is None:
        return "-"
    return f"{fmt_ms(figures.time_ms)}\n{_percent(figures.fraction_of_sol)} SOL"


def legend(board: Board, workloads: list[str]) -> list[str]:
    """What the marks and the rows under the table mean."""
    lines = ["times: geometric means over the public workloads; % SOL = SOL time / time"]
    if board.deterministic:
        lines.append(
            f"=: {board.hardware} is deterministic: times within 0.1 % on every workload share "
            "a rank and the earlier submission is listed first"
        )
    else:
        lines.append("=: 95 % time intervals overlap on every workload, so the rank is shared")
    if any(e.copy_of for e in board.entries):
        copies = [e for e in board.entries if e.copy_of]
        alike = ", ".join(f"#{e.submission} {e.copy_of.likeness:.2f}" for e in copies if e.copy_of)
        lines.append(
            "≈ copy of #N: the source nearly repeats that earlier public entry's (normalised "
            f"tokens alike: {alike}); shown, not removed"
        )
    if workloads:
        lines.append(
            "eager baseline and speed of light rows: per workload, as the first entry's run "
            "measured the eager baseline (the problem's reference.py run op by op)"
        )
    return lines


def _percent(fraction: float | None) -> str:
    return "-" if fraction is None else f"{100 * fraction:.1f}%"


def _times(speedup: float | None) -> str:
    return "-" if speedup is None else f"{speedup:.2f}x"
