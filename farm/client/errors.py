"""Errors of remote calls, each mapped to the CLI's exit codes (see farm/cli.py).

All derive from FarmError, so the CLI prints `error: <server's message>` and the hint.
"""

from __future__ import annotations

from farm.errors import FarmError


class ClientError(FarmError):
    """A remote call failed. `status` is the HTTP status (None when no response came)."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None, status: int | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status


class ServerUnavailable(ClientError):
    """No usable answer after the retries: connection refused, timeouts, 5xx (exit 1)."""


class BadRequest(ClientError):
    """The server rejected the request's content (400 / 404 / 409): fix the input (exit 2)."""

    exit_code = 2


class Refused(ClientError):
    """Authentication, permission or quota refused the call (401 / 403 / 429; exit 3).

    `retry_after` is the server's Retry-After in seconds when it gave one.
    """

    exit_code = 3

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, hint=hint, status=status)
        self.retry_after = retry_after


class WaitTimeout(ClientError):
    """Runs were still unfinished when a wait ran out (exit 4). `pending` holds their ids."""

    exit_code = 4

    def __init__(self, message: str, *, pending: list[int], hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.pending = pending
