from __future__ import annotations

from celery import shared_task

from leaderboard.artifacts import services
from leaderboard.artifacts.store import ArtifactStoreError


@shared_task(
    name="leaderboard.artifacts.tasks.store_source",
    autoretry_for=(ArtifactStoreError,),
    retry_backoff=5,
    retry_backoff_max=600,
    max_retries=20,  # then the periodic sweep (store_pending_sources) keeps trying
    acks_late=True,
)
def store_source(sha256: str) -> bool:
    return services.source_store(sha256=sha256)


@shared_task(name="leaderboard.artifacts.tasks.store_pending_sources", acks_late=True)
def store_pending_sources() -> int:
    return services.sources_store_pending()
