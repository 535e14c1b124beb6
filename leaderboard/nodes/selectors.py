from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Count, QuerySet
from django.utils import timezone

from farm.hardware import kinds
from leaderboard.nodes.models import Node


def node_is_alive(*, node: Node) -> bool:
    if node.last_heartbeat is None:
        return False
    return timezone.now() - node.last_heartbeat < timedelta(seconds=settings.FARM_NODE_DEAD_AFTER_S)


def node_status(*, node: Node) -> str:
    """disabled | draining | unhealthy | online | offline (never registered or no recent
    heartbeat). Unhealthy: the agent's self-test failed; it takes no work and says why
    (`node_health_problems`)."""
    if not node.enabled:
        return "disabled"
    alive = node_is_alive(node=node)
    if node.draining and alive:
        return "draining"
    if not node.healthy and alive:
        return "unhealthy"
    return "online" if alive else "offline"


def node_health_problems(*, node: Node) -> list[dict[str, str]]:
    """What the node's agent last said is wrong with it ([{code, detail}], empty when healthy)."""
    problems = (node.health or {}).get("problems") if isinstance(node.health, dict) else None
    if node.healthy or not isinstance(problems, list):
        return []
    return [
        {"code": str(p.get("code", "")), "detail": str(p.get("detail", ""))}
        for p in problems
        if isinstance(p, dict)
    ]


def node_list() -> QuerySet[Node]:
    return Node.objects.prefetch_related("hardware").order_by("name")


def hardware_online() -> dict[str, int]:
    """Enabled, not draining nodes with a recent heartbeat, counted per hardware class."""
    fresh = timezone.now() - timedelta(seconds=settings.FARM_NODE_DEAD_AFTER_S)
    rows = (
        Node.objects.filter(enabled=True, draining=False, healthy=True, last_heartbeat__gte=fresh)
        .values("hardware")
        .annotate(n=Count("id"))
    )
    return {row["hardware"]: row["n"] for row in rows if row["hardware"]}


def hardware_unserved(*, hardware: list[str]) -> dict[str, str]:
    """A warning for each of `hardware` that no online node serves: its runs wait in the queue
    (not lost: a node that comes back or is added takes them). Classes served are left out."""
    online = hardware_online()
    missing = [h for h in hardware if not online.get(h)]
    if not missing:
        return {}
    known = set(
        Node.objects.filter(enabled=True, hardware__name__in=missing).values_list(
            "hardware__name", flat=True
        )
    )
    served = ", ".join(sorted(online)) or "none"
    wait = duration_text(settings.FARM_UNSERVED_FAIL_AFTER_S)
    return {
        h: f"no node serves {h} right now ("
        + ("its nodes are offline or draining" if h in known else "this farm has no node for it")
        + f"): the run waits in the queue until one does, at most {wait}, then fails as "
        f"NO_NODE (FARM_UNSERVED_FAIL_AFTER_S). Classes served now: {served}"
        for h in missing
    }


def duration_text(seconds: int) -> str:
    """A whole number of hours or minutes as such ("6 h", "90 min"), else seconds."""
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    return f"{seconds // 60} min" if seconds % 60 == 0 else f"{seconds} s"


def node_gpus(node: Node, hardware: str) -> list[int]:
    """The indices of `node`'s GPUs of class `hardware`, as its agent last described them."""
    found: list[int] = []
    for d in node.devices if isinstance(node.devices, list) else []:
        if not isinstance(d, dict) or d.get("hardware") != hardware:
            continue
        index, device = d.get("index"), d.get("device")
        gpu = isinstance(device, str) and kinds.is_gpu(device)
        if gpu and isinstance(index, int) and index not in found:
            found.append(index)
    return found
