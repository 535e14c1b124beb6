"""`farm rejudge PROBLEM --hw H [--suite S] [--report OUT]`, then `farm rejudge --apply OUT`.

Operators: run every entry of a board again on the farm as it is now (current harness, guard
and tolerances; the new runs are private submissions of yours and move no board), wait, and
report per entry what changed; the report is written as JSON. Nothing is applied until
`--apply REPORT` takes the entries that now fail (a verdict about the kernel other than PASSED)
off the boards with the hacked mark: hidden, kept, the new verdict and reason shown to their
owner. A farm outcome (NODE_FAULT, INCONCLUSIVE, UNSUPPORTED, a failed run) is never applied.

Exit: 0 reported (or applied), 2 bad arguments or report, 3 not an operator, 4 the runs did not
finish within --timeout (their ids are printed; nothing was applied).
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path

from farm.client.commands.common import add_server_arguments, console, fmt_score, make_client
from farm.errors import FarmError

DEFAULT_TIMEOUT_S = 3600.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("problem", nargs="?", help="the board's problem, e.g. softmax")
    parser.add_argument("--hw", help="the board's hardware class, e.g. npu-sim-v1")
    parser.add_argument("--suite", default="core-v1", help="the board's suite (default core-v1)")
    parser.add_argument("--report", metavar="OUT", help="where to write the report (JSON)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds to wait for the runs (default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--apply", metavar="REPORT", help="apply a report written before: hide what fails now"
    )
    add_server_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from farm.client.rejudge import rejudge_board

    if args.apply:
        return _apply(args)
    if not args.problem or not args.hw:
        raise FarmError(
            "name the board: farm rejudge PROBLEM --hw HARDWARE",
            hint="or apply a report with `farm rejudge --apply REPORT`",
        )
    now = datetime.now(UTC).replace(microsecond=0).isoformat()
    report = rejudge_board(
        make_client(args),
        problem=args.problem,
        hardware=args.hw,
        suite=args.suite,
        created_at=now,
        timeout_s=args.timeout,
    )
    out = Path(args.report or f"rejudge-{args.suite}-{args.problem}-{args.hw}.json")
    out.write_text(json.dumps(report.to_json(), indent=2) + "\n")
    _show(report)
    n = len(report.failing)
    console(stderr=True).print(
        f"report: {out}; {n} entr{'y' if n == 1 else 'ies'} would leave the board"
        + (f": apply with `farm rejudge --apply {out}`" if n else ""),
        highlight=False,
    )
    return 0


def _apply(args: argparse.Namespace) -> int:
    from farm.client.rejudge import RejudgeReport, rejudge_apply

    path = Path(args.apply)
    try:
        report = RejudgeReport.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise FarmError(
            f"{path}: not a report of `farm rejudge` ({exc})",
            hint="write one with `farm rejudge PROBLEM --hw HARDWARE --report OUT`",
        ) from None
    applied = rejudge_apply(make_client(args), report)
    out = console()
    for entry in applied:
        out.print(
            f"submission {entry.submission} ({entry.user}): off the boards, now {entry.verdict}",
            highlight=False,
        )
    out.print(f"{len(applied)} entr{'y' if len(applied) == 1 else 'ies'} taken off the boards")
    return 0


def _show(report) -> None:
    from rich.table import Table

    table = Table(
        title=f"re-judged: {report.problem} on {report.hardware} ({report.suite}), "
        f"{report.created_at}"
    )
    for col in ("rank", "submission", "user", "board score", "new run", "verdict", "score"):
        table.add_column(col, justify="right" if "score" in col or col == "rank" else "left")
    table.add_column("change")
    for e in report.entries:
        table.add_row(
            str(e.rank),
            str(e.submission),
            e.user,
            fmt_score(e.board_sol_score),
            str(e.run),
            e.verdict or e.state,
            fmt_score(e.sol_score),
            f"[red]{e.change}[/]" if e.fails_now else e.change,
        )
    out = console()
    out.print(table)
    for e in report.entries:
        if e.change != "unchanged" and e.reason:
            out.print(f"  {e.submission}: {e.reason}", markup=False, highlight=False)
