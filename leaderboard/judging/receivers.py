"""What judgement does when the run lifecycle (leaderboard.runs.signals) announces an event."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from leaderboard.judging.audits import audit_abandon
from leaderboard.runs.models import Run
from leaderboard.runs.signals import run_failed


@receiver(run_failed, sender=Run, dispatch_uid="judging.audit_run_failed")
def audit_run_failed(sender: type[Run], run: Run, reason: str, **_: Any) -> None:
    """An audit run that failed for good holds the run it audits for an operator."""
    if run.audit_of_id:
        audit_abandon(run, reason)
