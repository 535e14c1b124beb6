"""Periodic upkeep of runs, run by Celery beat (schedule in leaderboard/celery.py; the boards'
and the nodes' own upkeep is in their apps' tasks):

- `runs_resend_stale` hands queued runs back to the broker when their message is long overdue
  (a broker restarted without persistence loses its queues; a message rejected once too often
  is gone). A second message for a run is harmless: the claim is conditional, one node wins.
- `runs_reap_unreported` takes back the active runs of a live node that its heartbeats have not
  listed for FARM_NODE_DEAD_AFTER_S (an agent that crashed and came back under the same token:
  the node is alive, its old runs are not; runs_reap alone would never see them).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from leaderboard.runs.models import Run
from leaderboard.runs.services import run_mark_lost, runs_send


def runs_resend_stale(*, older_than_s: int | None = None) -> int:
    """Re-send queued runs sent more than `older_than_s` ago; returns how many were sent."""
    age = settings.FARM_RESEND_QUEUED_AFTER_S if older_than_s is None else older_than_s
    cutoff = timezone.now() - timedelta(seconds=age)
    ids = list(
        Run.objects.filter(state=Run.State.QUEUED, sent_at__lt=cutoff).values_list("id", flat=True)[
            :1000
        ]
    )
    return runs_send(run_ids=ids) if ids else 0


def runs_reap_unreported() -> int:
    """Mark lost (and requeue) runs claimed long ago by a node whose last heartbeat, sent after
    the claim, did not list them; returns how many."""
    cutoff = timezone.now() - timedelta(seconds=settings.FARM_NODE_DEAD_AFTER_S)
    active = Run.objects.filter(
        state__in=Run.ACTIVE, claimed_at__lt=cutoff, node__last_heartbeat__gt=cutoff
    ).values_list("id", "node_id", "node__current_runs")
    n = 0
    for run_id, node_id, reported in active:
        if run_id not in (reported or []):
            n += run_mark_lost(run_id=run_id, node_id=node_id)
    return n
