"""Reading stored sources and issuing artifact URLs."""

from __future__ import annotations

from typing import Protocol

from leaderboard.artifacts.models import Artifact
from leaderboard.artifacts.store import artifact_store

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
    """A URL the node PUTs the artifact to (presigned S3, or the server's signed endpoint), for
    a name of ARTIFACT_TYPES, with the server's content type; ValueError for another name."""
    content_type = ARTIFACT_TYPES.get(name)
    if content_type is None:
        raise ValueError(f"artifact name {name!r}: use one of {', '.join(sorted(ARTIFACT_TYPES))}")
    key = f"runs/{run.pk}/{run.attempt}/{name}"
    Artifact.objects.update_or_create(
        run=run, attempt=run.attempt, name=name, defaults={"key": key, "content_type": content_type}
    )
    url = artifact_store().upload_url(key, content_type=content_type, base_url=base_url)
    return {
        "name": name,
        "key": key,
        "method": "PUT",
        "url": url,
        "headers": {"Content-Type": content_type},
    }


def artifacts_mark_reported(*, run, names: list[str]) -> None:
    Artifact.objects.filter(run=run, attempt=run.attempt, name__in=names).update(reported=True)


def artifact_download_url(*, artifact: Artifact, base_url: str) -> str:
    """A short-lived URL that downloads the artifact as an attachment of its recorded type."""
    return artifact_store().download_url(
        artifact.key, base_url=base_url, filename=artifact.name, content_type=artifact.content_type
    )


def artifact_put_signed(*, key: str, data: bytes, content_type: str) -> None:
    """Store an upload to a signed local URL, while the attempt it belongs to is active: an
    upload after the result is recorded could rewrite what the owner reads (ArtifactClosed)."""
    artifact = Artifact.objects.filter(key=key).select_related("run").first()
    if artifact is None or not artifact_open(artifact=artifact):
        raise ArtifactClosed(
            f"{key}: the run's attempt is over; its artifacts can no longer change"
        )
    artifact_store().put(key, data, content_type=content_type)


class ArtifactClosed(Exception):
    """The attempt an artifact belongs to is over (its result is recorded, or it was taken)."""


def artifact_open(*, artifact: Artifact) -> bool:
    return artifact.run.attempt_open(artifact.attempt)
