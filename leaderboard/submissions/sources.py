"""Putting submitted sources into artifact storage: a new source waits in the database
(`pending_text`) until it is stored; the Celery task and the periodic sweep retry."""

from __future__ import annotations

import logging

from django.utils import timezone

from leaderboard.artifacts.store import ArtifactStoreError, artifact_store
from leaderboard.celery import app
from leaderboard.submissions.models import Source

log = logging.getLogger(__name__)
STORE_SOURCE = "leaderboard.submissions.tasks.store_source"  # leaderboard/submissions/tasks.py


def source_store(*, sha256: str, attempts: int | None = None) -> bool:
    """Put a pending source into artifact storage and clear its DB copy.

    Returns False when there was nothing to do; raises ArtifactStoreError when storage failed
    (the text stays in the database, nothing is lost).
    """
    source = Source.objects.filter(sha256=sha256, pending_text__isnull=False).first()
    if source is None:
        return False
    store = artifact_store()
    store.put(
        source.key,
        source.pending_text.encode("utf-8"),
        content_type="text/x-python",
        attempts=attempts,
    )
    Source.objects.filter(sha256=sha256).update(pending_text=None, stored_at=timezone.now())
    return True


def source_store_soon(*, sha256s: list[str]) -> None:
    """Try once now (called after commit); on failure leave it to the Celery task."""
    for sha in sha256s:
        try:
            source_store(sha256=sha, attempts=1)
        except ArtifactStoreError as exc:
            log.warning("source %s kept in the database for now: %s", sha[:12], exc)
            try:
                app.send_task(STORE_SOURCE, args=[sha], countdown=5)
            except Exception as send_exc:  # broker down too: the periodic sweep will find it
                log.warning("could not queue the source upload: %s", send_exc)


def sources_store_pending(*, limit: int = 100) -> int:
    """Retry every pending source (oldest first); returns how many were stored."""
    stored = 0
    shas = (
        Source.objects.filter(pending_text__isnull=False)
        .order_by("created_at")
        .values_list("sha256", flat=True)
    )
    for sha in list(shas[:limit]):
        try:
            stored += source_store(sha256=sha)
        except ArtifactStoreError:
            break  # storage still down: try again on the next sweep
    return stored
