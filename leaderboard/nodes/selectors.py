from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Count, QuerySet
from django.utils import timezone

from leaderboard.nodes.models import Node


def node_is_alive(*, node: Node) -> bool:
    if node.last_heartbeat is None:
        return False
    return timezone.now() - node.last_heartbeat < timedelta(seconds=settings.FARM_NODE_DEAD_AFTER_S)


def node_status(*, node: Node) -> str:
    """disabled | draining | online | offline (never registered or no recent heartbeat)."""
    if not node.enabled:
        return "disabled"
    alive = node_is_alive(node=node)
    if node.draining and alive:
        return "draining"
    return "online" if alive else "offline"


def node_list() -> QuerySet[Node]:
    return Node.objects.prefetch_related("hardware").order_by("name")


def queue_depth_by_hardware() -> dict[str, int]:
    """Queued runs per hardware class."""
    from leaderboard.runs.models import Run

    rows = Run.objects.filter(state=Run.State.QUEUED).values("hardware_id").annotate(n=Count("id"))
    return {row["hardware_id"]: row["n"] for row in rows}
