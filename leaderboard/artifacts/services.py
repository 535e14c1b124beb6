"""Reading stored sources and issuing artifact URLs."""

from __future__ import annotations

import logging
import secrets
from typing import Protocol

from django.db import transaction

from leaderboard.artifacts.models import Artifact
from leaderboard.artifacts.store import (
    ArtifactStoreError,
    artifact_store,
    signed_download_url,
    signed_upload_url,
)

log = logging.getLogger(__name__)

# The artifacts a node may upload, by name, with the content type the server gives each: a node
# chooses neither the key nor the type (a text/html "log" served from the storage origin would
# be a page of the attacker's). The result document itself is posted, never uploaded.
ARTIFACT_TYPES = {
    "logs": "text/plain; charset=utf-8",
    "worker.log": "text/plain; charset=utf-8",
    "profile.ncu-rep": "application/octet-stream",
    "profile.rocprof.json": "application/json",
    "profile.rocprof.csv": "text/csv; charset=utf-8",
}


class StoredText(Protocol):
    """A text kept in artifact storage under `key`, or still in the database (`pending_text`)
    while it waits to be stored: a submission's Source."""

    @property
    def key(self) -> str: ...

    pending_text: str | None


def source_text(*, source: StoredText) -> str:
    """The text of a source; raises ArtifactStoreError when storage cannot deliver it."""
    if source.pending_text is not None:
        return source.pending_text
    return artifact_store().get(source.key).decode("utf-8")


def artifact_upload_url(*, run, node, name: str, base_url: str) -> dict:
    """A URL the node PUTs the artifact to, for a name of ARTIFACT_TYPES, with the server's
    content type; ValueError for another name. The URL is always the server's signed endpoint
    (never a presigned storage URL, which could not be revoked): an upload is accepted only
    while its attempt is open, so a URL dies with its run's result (artifact_put_signed)."""
    content_type = ARTIFACT_TYPES.get(name)
    if content_type is None:
        raise ValueError(f"artifact name {name!r}: use one of {', '.join(sorted(ARTIFACT_TYPES))}")
    key = f"runs/{run.pk}/{run.attempt}/{name}"
    Artifact.objects.get_or_create(
        run=run, attempt=run.attempt, name=name, defaults={"key": key, "content_type": content_type}
    )
    return {
        "name": name,
        "key": key,
        "method": "PUT",
        "url": signed_upload_url(key, content_type=content_type, base_url=base_url),
        "headers": {"Content-Type": content_type},
    }


def artifacts_mark_reported(*, run, names: list[str]) -> None:
    Artifact.objects.filter(run=run, attempt=run.attempt, name__in=names).update(reported=True)


def artifact_download_url(*, artifact: Artifact, base_url: str) -> str:
    """A short-lived URL that downloads the artifact as an attachment of its recorded type (the
    server's own signed URL while its bytes wait in the database)."""
    if artifact.pending_data is not None:
        return signed_download_url(
            artifact.stored_key,
            base_url=base_url,
            filename=artifact.name,
            content_type=artifact.content_type,
        )
    return artifact_store().download_url(
        artifact.stored_key,
        base_url=base_url,
        filename=artifact.name,
        content_type=artifact.content_type,
    )


def artifact_put_signed(*, key: str, data: bytes, content_type: str) -> None:
    """Accept an upload to a signed URL while the attempt it belongs to is open.

    Each upload is stored under a key of its own, and that key is made the artifact's under the
    run's row lock, which recording the result also takes: once the result is recorded no upload
    can change what the owner reads (ArtifactClosed), and a write racing the result lands on a
    key nothing points to. Storage that cannot take the bytes now (one short try) leaves them in
    the database, stored later by `artifacts_store_pending`: S3 trouble never holds a result."""
    artifact = Artifact.objects.filter(key=key).select_related("run").first()
    if artifact is None or not artifact_open(artifact=artifact):
        raise ArtifactClosed(
            f"{key}: the run's attempt is over; its artifacts can no longer change"
        )
    stored = f"{key}.{secrets.token_hex(6)}"
    pending: bytes | None = None
    try:
        artifact_store().put(stored, data, content_type=content_type, attempts=1)
    except ArtifactStoreError as exc:
        log.warning("artifact %s kept in the database for now: %s", key, exc)
        pending = data
    with transaction.atomic():
        run = type(artifact.run).objects.select_for_update().get(pk=artifact.run_id)
        if not run.attempt_open(artifact.attempt):
            raise ArtifactClosed(f"{key}: the run's result was recorded meanwhile; not stored")
        Artifact.objects.filter(pk=artifact.pk).update(object_key=stored, pending_data=pending)


def artifact_pending_data(*, stored_key: str) -> bytes | None:
    """The bytes of an accepted upload that still waits in the database, else None."""
    row = Artifact.objects.filter(object_key=stored_key, pending_data__isnull=False).first()
    return bytes(row.pending_data) if row is not None and row.pending_data is not None else None


def artifacts_store_pending(*, limit: int = 50) -> int:
    """Move uploads waiting in the database into artifact storage; returns how many."""
    stored = 0
    for artifact in Artifact.objects.filter(pending_data__isnull=False).order_by("id")[:limit]:
        data = bytes(artifact.pending_data or b"")
        try:
            artifact_store().put(artifact.stored_key, data, content_type=artifact.content_type)
        except ArtifactStoreError:
            break  # storage still down: the next sweep tries again
        stored += Artifact.objects.filter(pk=artifact.pk, object_key=artifact.object_key).update(
            pending_data=None
        )
    return stored


class ArtifactClosed(Exception):
    """The attempt an artifact belongs to is over (its result is recorded, or it was taken)."""


def artifact_open(*, artifact: Artifact) -> bool:
    return artifact.run.attempt_open(artifact.attempt)
