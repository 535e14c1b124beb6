"""The server's own liveness, as the reaper needs it.

A node is presumed dead when the server heard no heartbeat from it for FARM_NODE_DEAD_AFTER_S.
That inference only holds while the server could hear: during a deploy, a database fail-over or
any outage of the web tier, every node looks silent although every node is working. So the web
tier notes when it receives heartbeats and health probes (at most once per RECEPTION_NOTE_S per
process), and the reaper presumes nothing until the server has been receiving, without a pause
longer than FARM_RECEPTION_GAP_S, for a whole dead-node window.
"""

from __future__ import annotations

import contextlib
import time
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Case, F, Value, When
from django.utils import timezone

from leaderboard.nodes.models import Reception

RECEPTION_NOTE_S = 2.0


def reception_note(*, now: datetime | None = None) -> None:
    """Record that the server answers requests now; after a pause a new span begins."""
    now = now or timezone.now()
    gap_start = now - timedelta(seconds=settings.FARM_RECEPTION_GAP_S)
    since = Case(When(last__lt=gap_start, then=Value(now)), default=F("since"))
    if not Reception.objects.filter(pk=1).update(last=now, since=since):
        Reception.objects.get_or_create(pk=1, defaults={"since": now, "last": now})


def reception_dead_cutoff(*, now: datetime | None = None) -> datetime | None:
    """The instant before which a node's last heartbeat means it is dead, or None while the
    server has not been receiving for a whole FARM_NODE_DEAD_AFTER_S (presume nothing)."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.FARM_NODE_DEAD_AFTER_S)
    row = Reception.objects.filter(pk=1).first()
    if row is None or row.since > cutoff:
        return None
    if row.last < now - timedelta(seconds=settings.FARM_RECEPTION_GAP_S):
        return None  # the server hears nothing right now: an outage, or an idle farm
    return cutoff


_noted = float("-inf")


def reception_note_soon() -> None:
    """reception_note at most once per RECEPTION_NOTE_S in this process (called on every
    heartbeat and health probe); a database error is the outage itself and is not raised."""
    global _noted
    if time.monotonic() - _noted < RECEPTION_NOTE_S:
        return
    _noted = time.monotonic()
    with contextlib.suppress(DatabaseError):
        reception_note()
