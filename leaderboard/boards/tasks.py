from __future__ import annotations

from celery import shared_task

from leaderboard.boards import services


@shared_task(name="leaderboard.boards.tasks.recompute_boards", acks_late=True)
def recompute_boards() -> int:
    """Rebuild every board entry from the runs (repairs any drift)."""
    return services.boards_recompute()
