"""Cancelling a run: its owner (or an operator) stops a run that has not finished."""

from __future__ import annotations

from django.db import transaction

from leaderboard.runs.models import CANCELLED, Run
from leaderboard.runs.services import RunConflict, run_fail, run_get


def run_cancel(*, run_id: int, by: str) -> Run:
    """Stop a run that has not finished (`by`: who asked, as the run's detail names them). A
    queued run is never claimed; the node of an active one is told to abandon it at its next
    heartbeat, and what that node posts for it afterwards is refused (409). The run fails as
    CANCELLED, the farm's outcome (never a reward). Cancelling it again returns
    it unchanged; RunConflict for a finished run and for an audit run (the farm's own)."""
    with transaction.atomic():
        run = run_get(run_id, lock=True)
        if run.state == Run.State.FAILED and run.failure_code == CANCELLED:
            return run
        if run.state in Run.TERMINAL:
            outcome = run.verdict or run.failure_code
            raise RunConflict(
                f"run {run_id} has finished ({run.state} {outcome}); nothing to cancel"
            )
        if run.audit_of_id:
            raise RunConflict(
                f"run {run_id} audits run {run.audit_of_id} for the farm; it cannot be cancelled"
            )
        was = run.state
        run_fail(run, code=CANCELLED, detail=f"cancelled by {by} while {was}")
    return run
