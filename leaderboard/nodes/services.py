from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from leaderboard.accounts.tokens import NODE_PREFIX, token_hash, token_new
from leaderboard.nodes.models import Node
from leaderboard.nodes.reception import reception_note_soon
from leaderboard.problems.models import HardwareClass


class NodeError(ValueError):
    """A node's request cannot be honoured; the message says why."""


class NodeForbidden(NodeError):
    """The node asks for what its operator did not allow it."""


@transaction.atomic
def node_create(*, name: str, hardware: list[str] | None = None) -> tuple[Node, str]:
    """Create a node and return it with its token (shown once). Raises NodeError on a taken name."""
    if Node.objects.filter(name=name).exists():
        raise NodeError(f"node '{name}' exists; rotate its token instead (node_token_rotate)")
    key = token_new(NODE_PREFIX)
    node = Node.objects.create(name=name, token_hash=token_hash(key))
    if hardware:
        _allow(node, _hardware(hardware))
    return node, key


def _allow(node: Node, classes: list[HardwareClass]) -> None:
    """What the operator gave the node: the most it may serve, and what it serves now."""
    node.allowed_hardware.set(classes)
    node.hardware.set(classes)


def node_token_rotate(*, node: Node) -> str:
    key = token_new(NODE_PREFIX)
    Node.objects.filter(pk=node.pk).update(token_hash=token_hash(key))
    return key


def _hardware(names: list[str]) -> list[HardwareClass]:
    found = list(HardwareClass.objects.filter(name__in=names, active=True))
    missing = sorted(set(names) - {h.name for h in found})
    if missing:
        known = ", ".join(HardwareClass.objects.values_list("name", flat=True))
        raise NodeError(f"unknown hardware class '{missing[0]}' (known: {known})")
    return found


@transaction.atomic
def node_register(
    *, node: Node, hardware: list[str], devices: list[Any], agent_version: str, hostname: str
) -> Node:
    """Record what an agent found on its machine; it counts as a heartbeat. The classes must be
    among those the operator allowed the node (a token serves no other class's runs): raises
    NodeForbidden otherwise."""
    classes = _hardware(hardware)
    allowed = set(node.allowed_hardware.values_list("name", flat=True))
    refused = sorted({h.name for h in classes} - allowed)
    if refused:
        raise NodeForbidden(
            f"node '{node.name}' may serve only {', '.join(sorted(allowed)) or 'nothing'}; "
            f"an operator must allow {', '.join(refused)} (create_node --hardware, or the admin)"
        )
    node.hardware.set(classes)
    now = timezone.now()
    Node.objects.filter(pk=node.pk).update(
        registered_at=now,
        last_heartbeat=now,
        devices=devices,
        agent_version=agent_version,
        hostname=hostname,
    )
    node.refresh_from_db()
    return node


def node_heartbeat(
    *,
    node: Node,
    current_runs: list[int],
    devices: list[Any] | None,
    health: dict[str, Any] | None = None,
) -> Node:
    """Note a heartbeat (the server's clock, never the node's). `health` is the agent's own
    report (`healthy`, `problems` [{code, detail}]): an unhealthy node claims nothing."""
    reception_note_soon()
    fields: dict[str, Any] = {"last_heartbeat": timezone.now(), "current_runs": current_runs}
    if devices is not None:
        fields["devices"] = devices
    if health is not None:
        fields["healthy"], fields["health"] = bool(health.get("healthy", True)), health
    Node.objects.filter(pk=node.pk).update(**fields)
    node.refresh_from_db()
    return node


def node_enroll(*, name: str, hardware: list[str]) -> tuple[Node, str]:
    """Create a node from an agent holding the enrolment secret; rotate if the name exists."""
    node = Node.objects.filter(name=name).first()
    if node is None:
        return node_create(name=name, hardware=hardware)
    _allow(node, _hardware(hardware))  # the enrolment secret is the operator's word
    return node, node_token_rotate(node=node)


def nodes_mark_stale() -> int:
    """Nodes silent for longer than FARM_NODE_DEAD_AFTER_S hold no current runs."""
    cutoff = timezone.now() - timedelta(seconds=settings.FARM_NODE_DEAD_AFTER_S)
    return (
        Node.objects.filter(last_heartbeat__lt=cutoff)
        .exclude(current_runs=[])
        .update(current_runs=[])
    )
