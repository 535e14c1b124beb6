from __future__ import annotations

from django.db.models import Count

from leaderboard.runs.models import Run


def queue_depth_by_hardware() -> dict[str, int]:
    """Queued runs per hardware class."""
    rows = Run.objects.filter(state=Run.State.QUEUED).values("hardware_id").annotate(n=Count("id"))
    return {row["hardware_id"]: row["n"] for row in rows}
