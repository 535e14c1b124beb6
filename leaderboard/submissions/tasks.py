from __future__ import annotations

from celery import shared_task

from leaderboard.artifacts.store import ArtifactStoreError
from leaderboard.submissions import sources


@shared_task(
    name=sources.STORE_SOURCE,
    autoretry_for=(ArtifactStoreError,),
    retry_backoff=5,
    retry_backoff_max=600,
    max_retries=20,  # then the periodic sweep (store_pending_sources) keeps trying
    acks_late=True,
)
def store_source(sha256: str) -> bool:
    return sources.source_store(sha256=sha256)


@shared_task(name="leaderboard.submissions.tasks.store_pending_sources", acks_late=True)
def store_pending_sources() -> int:
    return sources.sources_store_pending()
