"""Where an audit run goes: never to the node whose result it checks (see
leaderboard.judging.audits for when audits start and how they conclude).

An audit run is sent to one chosen node's queue (farm.queues.node_queue); when no other node of
the class is online it waits, queued and unsent, and the periodic resend tries again. A class
served by a single enabled node audits on that node when FARM_AUDIT_SINGLE_NODE is "same-node".
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from farm.queues import node_queue
from leaderboard.nodes.models import Node
from leaderboard.runs.models import Run


def single_node(hardware: str) -> bool:
    """The class has at most one enabled node: no other node can audit its results."""
    return Node.objects.filter(hardware=hardware, enabled=True).count() <= 1


def same_node_allowed(hardware: str) -> bool:
    return settings.FARM_AUDIT_SINGLE_NODE == "same-node" and single_node(hardware)


def audit_target(audit: Run) -> Node | None:
    """The online node of the class, other than the audited run's (unless the class has only
    that one and FARM_AUDIT_SINGLE_NODE is "same-node"), with the fewest active runs."""
    cutoff = timezone.now() - timedelta(seconds=settings.FARM_NODE_DEAD_AFTER_S)
    nodes = Node.objects.filter(
        hardware=audit.hardware_id, enabled=True, draining=False, last_heartbeat__gte=cutoff
    )
    if not same_node_allowed(audit.hardware_id):
        avoid = Run.objects.filter(pk=audit.audit_of_id).values_list("node_id", flat=True).first()
        nodes = nodes.exclude(pk=avoid)
    return (
        nodes.annotate(active=Count("runs", filter=Q(runs__state__in=Run.ACTIVE)))
        .order_by("active", "pk")
        .first()
    )


def audit_queue(audit: Run) -> str | None:
    """Where to send an audit run: a chosen node's queue, or None while there is none."""
    node = audit_target(audit)
    return None if node is None else node_queue(audit.hardware_id, node.pk)


def audit_claim_refused(run_id: int, node: Node) -> bool:
    """An audit run may not be claimed by the node whose result it checks (unless that node is
    its class's only one and FARM_AUDIT_SINGLE_NODE is "same-node")."""
    audit = Run.objects.filter(pk=run_id, audit_of__node=node).only("hardware_id").first()
    return audit is not None and not same_node_allowed(audit.hardware_id)
