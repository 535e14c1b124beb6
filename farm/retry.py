"""One HTTP retry engine for every caller of the server, with two policies:

- CLIENT (farm.client): a POST is retried only when the server cannot have acted on it (the
  connection was refused before the request left, or the answer was 429, or 503 with
  Retry-After); reads are retried on every transient failure.
- NODE (agents.client): the node API is idempotent (conditional claims, results stored once,
  an Idempotency-Key on the result post), so every request is retried on every transient
  failure.

Transient: a connection error, a timeout or a broken answer; HTTP 429 and 5xx. Waits grow as
backoff_s * 2**n with full jitter up to max_backoff_s; a Retry-After is honoured up to
max_retry_after_s, beyond which the call stops at once (a quota that frees up in an hour is
the caller's decision). The engine returns the last outcome; each caller turns it into its own
errors.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests

RETRY_STATUSES = frozenset({500, 502, 503, 504})
# not transient: retrying a request the library refuses to send cannot help
_FINAL_ERRORS = (
    requests.exceptions.InvalidURL,
    requests.exceptions.InvalidSchema,
    requests.exceptions.MissingSchema,
    requests.exceptions.InvalidHeader,
)


@dataclass(frozen=True)
class RetryPolicy:
    """`retries` extra attempts after the first; `idempotent`: every method may be repeated."""

    retries: int = 5
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0
    idempotent: bool = False

    def delay(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_backoff_s, self.backoff_s * 2**attempt))

    def wait(
        self,
        method: str,
        attempt: int,
        *,
        response: requests.Response | None = None,
        error: requests.RequestException | None = None,
    ) -> float | None:
        """Seconds to wait before attempt `attempt + 1`; None when this outcome is final."""
        if attempt >= self.retries:
            return None
        repeatable = self.idempotent or method.upper() == "GET"
        if error is not None:
            if isinstance(error, _FINAL_ERRORS):
                return None
            not_sent = isinstance(error, requests.ConnectionError) and _not_sent(error)
            return self.delay(attempt) if repeatable or not_sent else None
        assert response is not None
        status, retry_after = response.status_code, retry_after_s(response)
        if status == 429 or (status == 503 and retry_after is not None):
            wait = retry_after if retry_after is not None else self.delay(attempt)
            return wait if wait <= self.max_retry_after_s else None
        if status in RETRY_STATUSES and repeatable:
            return self.delay(attempt)
        return None


CLIENT = RetryPolicy()
NODE = RetryPolicy(max_backoff_s=10.0, idempotent=True)


@dataclass(frozen=True)
class Outcome:
    """The last attempt: a response (any status) or the error that stopped it."""

    response: requests.Response | None
    error: requests.RequestException | None
    attempts: int


def send(
    request: Callable[[], requests.Response],
    *,
    method: str,
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
) -> Outcome:
    """Call `request` until it answers below 400 or the policy says the outcome is final."""
    attempt = 0
    while True:
        response: requests.Response | None = None
        error: requests.RequestException | None = None
        try:
            response = request()
        except requests.RequestException as exc:
            error = exc
        if response is not None and response.status_code < 400:
            return Outcome(response, None, attempt + 1)
        wait = policy.wait(method, attempt, response=response, error=error)
        if wait is None:
            return Outcome(response, error, attempt + 1)
        sleep(wait)
        attempt += 1


def _not_sent(exc: requests.ConnectionError) -> bool:
    """True when the connection failed before any byte of the request left."""
    text = repr(exc)
    return any(s in text for s in ("Connection refused", "NewConnectionError", "Name or service"))


def retry_after_s(response: requests.Response) -> float | None:
    """Retry-After in seconds (delta-seconds or an HTTP date), None when absent or unusable."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
