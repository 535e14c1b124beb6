"""Domain exceptions -> HTTP responses, so that APIs stay thin and every error says what to do."""

from __future__ import annotations

from typing import Any

from django.db import OperationalError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from leaderboard.artifacts.services import ArtifactClosed
from leaderboard.artifacts.store import ArtifactStoreError
from leaderboard.nodes.services import NodeError, NodeForbidden
from leaderboard.runs.services import ResultInvalid, RunConflict, RunForbidden, RunNotFound
from leaderboard.submissions.services import QuotaExceeded
from leaderboard.submissions.validation import SubmissionInvalid

STORAGE_RETRY_AFTER_S = 30
DATABASE_RETRY_AFTER_S = 1

_STATUS = {
    RunNotFound: status.HTTP_404_NOT_FOUND,
    RunForbidden: status.HTTP_403_FORBIDDEN,
    RunConflict: status.HTTP_409_CONFLICT,
    ResultInvalid: status.HTTP_400_BAD_REQUEST,
    NodeForbidden: status.HTTP_403_FORBIDDEN,
    ArtifactClosed: status.HTTP_409_CONFLICT,
    NodeError: status.HTTP_400_BAD_REQUEST,
}


def handle(exc: Exception, context: dict[str, Any]) -> Response | None:
    if _database_busy(exc):
        # The embedded SQLite database waited its busy timeout for the write lock; the request's
        # transaction was rolled back. Clients repeat a 503 with Retry-After (farm.retry).
        return Response(
            {"detail": "the database is busy; nothing was stored, retry in a moment"},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)},
        )
    if isinstance(exc, SubmissionInvalid):
        return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, ArtifactStoreError):
        if exc.missing:
            return Response({"detail": str(exc)}, status=status.HTTP_404_NOT_FOUND)
        return Response(
            {"detail": f"artifact storage is unavailable ({exc}); nothing was lost, retry later"},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(STORAGE_RETRY_AFTER_S)},
        )
    if isinstance(exc, QuotaExceeded):
        return Response(
            {"detail": str(exc)},
            status=status.HTTP_429_TOO_MANY_REQUESTS,
            headers={"Retry-After": str(max(1, int(exc.wait_s)))},
        )
    for kind, code in _STATUS.items():
        if isinstance(exc, kind):
            return Response({"detail": str(exc)}, status=code)
    return exception_handler(exc, context)


def _database_busy(exc: Exception) -> bool:
    return isinstance(exc, OperationalError) and "database is locked" in str(exc)
