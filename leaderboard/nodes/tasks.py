from __future__ import annotations

from celery import shared_task

from leaderboard.nodes import services


@shared_task(name="leaderboard.nodes.tasks.mark_stale_nodes", acks_late=True)
def mark_stale_nodes() -> int:
    """Clear the current runs of nodes that stopped heartbeating, so the node list shows them
    idle and offline (their runs are reaped by leaderboard.runs.tasks.reap_lost_runs)."""
    return services.nodes_mark_stale()
