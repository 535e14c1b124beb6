"""Operator actions from the admin: requeue runs, release a held run (by its audit, or by a
time the judge could not check), re-run an audit."""

from __future__ import annotations

from django.db import transaction

from leaderboard.boards.services import board_entries_refresh_for_runs, board_entry_refresh_for_run
from leaderboard.judging.audits import audit_set
from leaderboard.runs.models import Result, Run
from leaderboard.runs.services import runs_send


def runs_requeue(*, run_ids: list[int]) -> int:
    """Operator action: put finished or failed runs back in the queue (their result is deleted).

    A requeued run loses its audit (its next result is judged afresh); a requeued audit run puts
    the run it audits back to pending."""
    with transaction.atomic():
        Run.objects.filter(audit_of_id__in=run_ids).delete()
        Run.objects.filter(id__in=run_ids).update(audit=Run.Audit.NONE, audit_detail="")
        Run.objects.filter(audit_run__id__in=run_ids).exclude(id__in=run_ids).update(
            audit=Run.Audit.PENDING, audit_detail="the audit is being re-run"
        )
        Result.objects.filter(run_id__in=run_ids).delete()
        n = (
            Run.objects.filter(id__in=run_ids)
            .exclude(state__in=Run.ACTIVE)
            .update(
                state=Run.State.QUEUED,
                node=None,
                sent_at=None,
                verdict="",
                sol_score=None,
                finished_at=None,
                failure_code="",
                failure_detail="",
            )
        )
        board_entries_refresh_for_runs(run_ids=run_ids)
        transaction.on_commit(lambda: runs_send(run_ids=run_ids))
    return n


def audit_release(run: Run, *, by: str) -> bool:
    """Operator: show a held run on its board after all. False when it is not held."""
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run.pk)
        if run.audit != Run.Audit.HELD:
            return False
        audit_set(run, Run.Audit.CONFIRMED, f"{run.audit_detail} Released by {by}.")
        board_entry_refresh_for_run(run=run)
    return True


def audit_rerun(run: Run) -> bool:
    """Operator: evaluate the audit of a held (or confirmed) run again, on another node."""
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run.pk)
        audit = Run.objects.filter(audit_of=run).first()
        if run.audit not in (Run.Audit.HELD, Run.Audit.CONFIRMED) or audit is None:
            return False
        runs_requeue(run_ids=[audit.pk])  # sets `run` pending and refreshes its board entry
    return True
