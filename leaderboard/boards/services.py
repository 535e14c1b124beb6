"""Board entries: the best valid run per user per problem per hardware (per suite).

A run counts only when it is done, in leaderboard mode, PASSED (the server's verdict, after the
roofline floor), its secret-seed workloads ran and PASSED, its submission is neither private
nor marked hacked, and it is not waiting for or held by an audit (leaderboard.judging.audits).
Audit runs themselves never count.
"""

from __future__ import annotations

import logging
import math

from django.db import transaction
from django.db.models import F

from leaderboard.artifacts.services import source_text
from leaderboard.artifacts.store import ArtifactStoreError
from leaderboard.boards.likeness import fingerprint
from leaderboard.boards.models import Board, BoardEntry
from leaderboard.runs.models import Run, WorkloadResult

log = logging.getLogger(__name__)


def board_get_or_create(*, problem_id: int, hardware_id: str) -> Board:
    board, _ = Board.objects.get_or_create(problem_id=problem_id, hardware_id=hardware_id)
    return board


def counting_runs():
    return Run.objects.filter(
        mode="leaderboard",
        state=Run.State.DONE,
        verdict="PASSED",
        sol_score__isnull=False,
        result__secret_passed=True,
        submission__hacked=False,
        submission__private=False,
        audit__in=Run.SHOWN_AUDIT,
        audit_of__isnull=True,
    )


@transaction.atomic
def board_entry_refresh(*, problem_id: int, hardware_id: str, user_id: int) -> BoardEntry | None:
    """Recompute one user's entry on one board; removes it when no run counts any more."""
    board = board_get_or_create(problem_id=problem_id, hardware_id=hardware_id)
    best = (
        counting_runs()
        .filter(problem_id=problem_id, hardware_id=hardware_id, user_id=user_id)
        .order_by("-sol_score", "finished_at")
        .first()
    )
    Board.objects.filter(pk=board.pk).update(version=F("version") + 1)
    if best is None:
        BoardEntry.objects.filter(board=board, user_id=user_id).delete()
        return None
    kept = BoardEntry.objects.filter(board=board, user_id=user_id).first()
    entry, _ = BoardEntry.objects.update_or_create(
        board=board,
        user_id=user_id,
        defaults={
            "run": best,
            "submission_id": best.submission_id,
            "sol_score": best.sol_score,
            "fingerprint": _fingerprint(best, kept),
            **_figures(best),
        },
    )
    return entry


def _fingerprint(run: Run, kept: BoardEntry | None) -> list[int]:
    """The source sketch of the run's submission (boards.likeness): the kept entry's when it is
    of the same submission, else read from storage; [] while storage cannot deliver it (the
    entry is then not compared, and the next refresh tries again)."""
    if kept is not None and kept.submission_id == run.submission_id and kept.fingerprint:
        return list(kept.fingerprint)
    try:
        return fingerprint(source_text(source=run.submission.source))
    except (ArtifactStoreError, UnicodeDecodeError) as exc:
        log.warning("no source fingerprint for submission %s: %s", run.submission_id, exc)
        return []


def _figures(run: Run) -> dict:
    rows = list(WorkloadResult.objects.filter(result_id=run.pk, time_ms__gt=0))
    public = [r for r in rows if not r.secret] or rows
    return {
        "time_ms": _geomean([r.time_ms for r in public]),
        "sol_ms": _geomean([r.sol_ms for r in public]),
        "fraction_of_sol": _geomean([_ratio(r.sol_ms, r.time_ms) for r in public]),
        "speedup_eager": _geomean([_ratio(r.baseline_eager_ms, r.time_ms) for r in public]),
        "speedup_compile": _geomean([_ratio(r.baseline_compile_ms, r.time_ms) for r in public]),
        "intervals": {r.workload_id: _interval(r) for r in public},
        "workloads": {r.workload_id: _workload(r) for r in public},
    }


def _workload(row: WorkloadResult) -> dict[str, float | None]:
    """One workload's figures on the board (ms; the SOL score of this workload alone)."""
    return {
        "time_ms": row.time_ms,
        "sol_ms": row.sol_ms,
        "sol_score": row.sol_score,
        "eager_ms": row.baseline_eager_ms,
    }


def _interval(row: WorkloadResult) -> list[float | None]:
    """[low, high] ms of a row's time: its confidence interval, or the time itself."""
    ci = row.interval
    return [ci.low_ms, ci.high_ms] if ci else [row.time_ms, row.time_ms]


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _geomean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None and v > 0]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def board_entry_refresh_for_run(*, run: Run) -> BoardEntry | None:
    """board_entry_refresh for the board and user of `run`."""
    return board_entry_refresh(
        problem_id=run.problem_id, hardware_id=run.hardware_id, user_id=run.user_id
    )


def board_entries_refresh_for_runs(*, run_ids: list[int]) -> None:
    keys = (
        Run.objects.filter(id__in=run_ids)
        .values_list("problem_id", "hardware_id", "user_id")
        .distinct()
    )
    for problem_id, hardware_id, user_id in keys:
        board_entry_refresh(problem_id=problem_id, hardware_id=hardware_id, user_id=user_id)


def board_update(
    *, board: Board, sources_public: bool | None = None, owner_id: int | None = None
) -> Board:
    if sources_public is not None:
        board.sources_public = sources_public
    if owner_id is not None:
        board.owner_id = owner_id
    board.version += 1
    board.save(update_fields=["sources_public", "owner", "version"])
    return board


def boards_recompute() -> int:
    """Refresh every (problem, hardware, user) that has leaderboard runs; returns how many."""
    keys = (
        Run.objects.filter(mode="leaderboard")
        .values_list("problem_id", "hardware_id", "user_id")
        .distinct()
    )
    n = 0
    for problem_id, hardware_id, user_id in keys:
        board_entry_refresh(problem_id=problem_id, hardware_id=hardware_id, user_id=user_id)
        n += 1
    return n
