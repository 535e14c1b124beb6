"""Where a run goes. A run retried after a NODE_FAULT (or a node that lost it) goes to an
online node of its class that has not faulted it, when there is one (`fault_nodes`; with none,
to the class queue: a single node must be allowed to try again). An audit run never goes to the
node whose result it checks (see leaderboard.judging.audits for when audits start and how they
conclude).

An audit run is sent to one chosen node's queue (farm.queues.node_queue); when no other node of
the class is online it waits, queued and unsent, and the periodic resend tries again. A class
served by a single enabled node audits on that node when FARM_AUDIT_SINGLE_NODE is "same-node":
on another of its GPUs of the class when it has one (the device queue,
farm.queues.device_queue; the GPU that produced the result may not claim it), else on the same
GPU in a fresh process.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from farm.queues import device_queue, hardware_queue, node_queue
from leaderboard.nodes.models import Node
from leaderboard.nodes.selectors import node_gpus
from leaderboard.runs.models import Run


def single_node(hardware: str) -> bool:
    """The class has at most one enabled node: no other node can audit its results."""
    return Node.objects.filter(hardware=hardware, enabled=True).count() <= 1


def same_node_allowed(hardware: str) -> bool:
    return settings.FARM_AUDIT_SINGLE_NODE == "same-node" and single_node(hardware)


def run_queue(run: Run) -> str | None:
    """The queue to send `run` to (None: an audit run that must wait for a node)."""
    if run.audit_of_id:
        return audit_queue(run)
    if run.fault_nodes:
        node = _least_busy(_online(run.hardware_id).exclude(pk__in=run.fault_nodes))
        if node is not None:
            return node_queue(run.hardware_id, node.pk)
    return hardware_queue(run.hardware_id)


def fault_refusal(run_id: int, node: Node) -> str | None:
    """Why `node` may not claim run `run_id`: a node whose attempt at it ended in a fault, while
    another online node of the class has not faulted it. None when it may."""
    run = Run.objects.filter(pk=run_id).only("hardware_id", "fault_nodes").first()
    if run is None or node.pk not in (run.fault_nodes or []):
        return None
    if not _online(run.hardware_id).exclude(pk__in=run.fault_nodes).exists():
        return None
    return f"run {run_id} faulted on this node before; another node must run it"


def _online(hardware: str) -> QuerySet[Node]:
    """Enabled, healthy, non-draining nodes of the class with a recent heartbeat."""
    cutoff = timezone.now() - timedelta(seconds=settings.FARM_NODE_DEAD_AFTER_S)
    return Node.objects.filter(
        hardware=hardware, enabled=True, draining=False, healthy=True, last_heartbeat__gte=cutoff
    )


def _least_busy(nodes: QuerySet[Node]) -> Node | None:
    return (
        nodes.annotate(active=Count("runs", filter=Q(runs__state__in=Run.ACTIVE)))
        .order_by("active", "pk")
        .first()
    )


def audit_target(audit: Run) -> Node | None:
    """The online node of the class, other than the audited run's (unless the class has only
    that one and FARM_AUDIT_SINGLE_NODE is "same-node"), with the fewest active runs."""
    nodes = _online(audit.hardware_id)
    if not same_node_allowed(audit.hardware_id):
        avoid = Run.objects.filter(pk=audit.audit_of_id).values_list("node_id", flat=True).first()
        nodes = nodes.exclude(pk=avoid)
    return _least_busy(nodes)


def audit_gpu(audit: Run, node: Node) -> int | None:
    """Where `audit` runs on `node` when that node produced the result it checks: another of
    its GPUs of the class (None when the audit goes to another node, or there is no other)."""
    original = Run.objects.filter(pk=audit.audit_of_id).values("node_id", "device_index").first()
    if original is None or original["node_id"] != node.pk:
        return None
    others = _other_gpus(node, audit.hardware_id, original["device_index"])
    return others[0] if others else None


def _other_gpus(node: Node, hardware: str, produced_on: int | None) -> list[int]:
    """`node`'s GPUs of class `hardware` besides `produced_on` (none when that is unknown)."""
    if produced_on is None:
        return []
    return [i for i in node_gpus(node, hardware) if i != produced_on]


def audit_queue(audit: Run) -> str | None:
    """Where to send an audit run: a chosen node's queue (one of its GPUs' when the node audits
    its own result), or None while there is none."""
    node = audit_target(audit)
    if node is None:
        return None
    gpu = audit_gpu(audit, node)
    if gpu is None:
        return node_queue(audit.hardware_id, node.pk)
    return device_queue(audit.hardware_id, node.pk, gpu)


def audit_claim_refusal(run_id: int, node: Node, device_index: int | None) -> str | None:
    """Why `node` (its GPU `device_index`) may not claim run `run_id`, None when it may. An
    audit run may not be claimed by the node whose result it checks, unless that node is its
    class's only one and FARM_AUDIT_SINGLE_NODE is "same-node"; then not by the GPU that
    produced the result while the node has another of the class."""
    audit = Run.objects.select_related("audit_of").filter(pk=run_id, audit_of__node=node).first()
    if audit is None or audit.audit_of is None:
        return None
    if not same_node_allowed(audit.hardware_id):
        return f"run {run_id} audits a result of this node; another node must run it"
    produced_on = audit.audit_of.device_index
    if device_index == produced_on and _other_gpus(node, audit.hardware_id, produced_on):
        return f"run {run_id} audits a result of this GPU; another GPU of this node must run it"
    return None
