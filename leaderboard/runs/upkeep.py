"""Periodic upkeep of runs, run by Celery beat (schedule in leaderboard/celery.py; the boards'
and the nodes' own upkeep is in their apps' tasks):

- `runs_resend_stale` hands queued runs back to the broker when their message is long overdue
  (a broker restarted without persistence loses its queues; a message rejected once too often
  is gone). A second message for a run is harmless: the claim is conditional, one node wins.
- `runs_reap_unreported` takes back the active runs of a live node that its heartbeats have not
  listed for FARM_NODE_DEAD_AFTER_S (an agent that crashed and came back under the same token:
  the node is alive, its old runs are not; runs_reap alone would never see them).
- `runs_fail_unserved` fails, as NO_NODE, the runs queued longer than FARM_UNSERVED_FAIL_AFTER_S
  for a class that no usable node served in that time, instead of leaving them queued forever.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from leaderboard.nodes.models import Node
from leaderboard.nodes.reception import reception_dead_cutoff
from leaderboard.nodes.selectors import duration_text
from leaderboard.runs.models import NO_NODE, Run
from leaderboard.runs.services import run_fail, run_get, run_mark_lost, runs_send


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


def runs_fail_unserved() -> int:
    """Fail as NO_NODE (the farm's outcome) the runs queued for more than
    FARM_UNSERVED_FAIL_AFTER_S whose class had no enabled, healthy, non-draining node heard
    from in that time; returns how many. Audit runs are left to the audit. Nothing is presumed
    while the server itself has not been hearing heartbeats (leaderboard.nodes.reception)."""
    if reception_dead_cutoff() is None:
        return 0
    wait_s = settings.FARM_UNSERVED_FAIL_AFTER_S
    since = timezone.now() - timedelta(seconds=wait_s)
    queued = Run.objects.filter(state=Run.State.QUEUED, audit_of__isnull=True, created_at__lt=since)
    classes = set(queued.values_list("hardware_id", flat=True).distinct())
    served = set(
        Node.objects.filter(
            hardware__name__in=classes,
            enabled=True,
            healthy=True,
            draining=False,
            last_heartbeat__gte=since,
        ).values_list("hardware__name", flat=True)
    )
    ids = queued.filter(hardware_id__in=classes - served).values_list("id", flat=True)
    return sum(_fail_unserved(run_id, wait_s) for run_id in list(ids[:1000]))


def _fail_unserved(run_id: int, wait_s: int) -> bool:
    with transaction.atomic():
        run = run_get(run_id, lock=True)
        if run.state != Run.State.QUEUED:
            return False  # claimed or cancelled since the sweep read it
        detail = (
            f"no node served {run.hardware_id} for {duration_text(wait_s)} "
            f"(FARM_UNSERVED_FAIL_AFTER_S={wait_s}): the farm could not evaluate the run; "
            "submit it again once /api/nodes/ lists an online node of the class"
        )
        run_fail(run, code=NO_NODE, detail=detail)
    return True
