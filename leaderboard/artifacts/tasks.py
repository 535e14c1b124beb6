from __future__ import annotations

from celery import shared_task

from leaderboard.artifacts.services import artifacts_store_pending


@shared_task(name="leaderboard.artifacts.tasks.store_pending_artifacts", acks_late=True)
def store_pending_artifacts() -> int:
    """Uploads accepted while artifact storage was unavailable go to storage now."""
    return artifacts_store_pending()
