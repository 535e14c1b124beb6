"""Reads of artifacts."""

from __future__ import annotations

from django.db.models import QuerySet

from leaderboard.artifacts.models import Artifact


def artifacts_stored(*, run) -> QuerySet[Artifact]:
    """The artifacts of the run's latest attempt that are stored: the node's result named them
    as uploaded. A URL issued for an upload that then failed lists nothing."""
    return Artifact.objects.filter(run=run, attempt=run.attempt, reported=True)
