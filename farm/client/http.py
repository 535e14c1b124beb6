"""HTTP with retries: backoff on connection errors and 5xx, Retry-After on 429 and 503.

A POST is retried only when the server cannot have acted on it: the connection was refused
before the request was sent, or the server answered 429 / 503 (both mean "not done, come back
later"). Other methods are idempotent reads and are retried on every transient failure.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

from farm.client.errors import BadRequest, ClientError, Refused, ServerUnavailable

RETRY_STATUSES = frozenset({500, 502, 503, 504})
USER_AGENT = "farm-client/1"


@dataclass(frozen=True)
class RetryPolicy:
    """`retries` extra attempts; waits grow as backoff_s * 2**n (full jitter) up to
    max_backoff_s. A Retry-After longer than max_retry_after_s is not waited for: the call
    raises at once (a quota that frees up in an hour is the caller's decision)."""

    retries: int = 5
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0

    def delay(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_backoff_s, self.backoff_s * 2**attempt))


class Transport:
    """One requests.Session bound to a base URL and a bearer token."""

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        timeout_s: float = 30.0,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.policy = policy or RetryPolicy()
        self.sleep = sleep
        self.session = requests.Session()
        self.session.headers["User-Agent"] = USER_AGENT
        self.session.headers["Accept"] = "application/json"
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else self.base_url + path

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """Send with retries; return the decoded JSON (or text). Raises ClientError kinds."""
        url = self.url(path)
        attempt = 0
        while True:
            wait, error = self._attempt(method, url, attempt, kwargs)
            if error is None:
                return wait
            if attempt >= self.policy.retries or wait is None:
                raise error
            self.sleep(wait)
            attempt += 1

    def _attempt(self, method: str, url: str, attempt: int, kwargs: dict[str, Any]) -> Any:
        """(body, None) on success, else (seconds to wait or None if final, error)."""
        try:
            response = self.session.request(method, url, timeout=self.timeout_s, **kwargs)
        except requests.ConnectionError as exc:
            retry = method == "GET" or _not_sent(exc)
            return (self.policy.delay(attempt) if retry else None), _unreachable(url, exc)
        except requests.Timeout as exc:
            error = ServerUnavailable(
                f"{method} {url}: no answer within {self.timeout_s:.0f} s ({type(exc).__name__})",
                hint="the server may be overloaded; retry later",
            )
            return (self.policy.delay(attempt) if method == "GET" else None), error
        if response.status_code < 400:
            return _body(response), None
        return self._failure(method, url, response, attempt)

    def _failure(self, method: str, url: str, response: requests.Response, attempt: int) -> Any:
        status = response.status_code
        message = server_message(response)
        retry_after = _retry_after(response)
        if status == 429 or (status == 503 and retry_after is not None):
            error: ClientError = (
                Refused(message, status=status, retry_after=retry_after)
                if status == 429
                else ServerUnavailable(message, status=status)
            )
            wait = retry_after if retry_after is not None else self.policy.delay(attempt)
            return (wait if wait <= self.policy.max_retry_after_s else None), error
        if status in RETRY_STATUSES:
            error = ServerUnavailable(
                f"{method} {url} failed with HTTP {status}: {message}",
                status=status,
                hint="the server failed; retry later or tell its operator",
            )
            return (self.policy.delay(attempt) if method == "GET" else None), error
        if status == 413:
            too_large = "a kernel is one source file of at most a few hundred KiB: check the path"
            return None, BadRequest(message, status=status, hint=too_large)
        if status in (401, 403):
            hint = "log in with `farm login` or set FARM_TOKEN" if status == 401 else None
            return None, Refused(message, status=status, hint=hint)
        return None, BadRequest(message, status=status)


def _not_sent(exc: requests.ConnectionError) -> bool:
    """True when the connection failed before any byte of the request left."""
    text = repr(exc)
    return any(s in text for s in ("Connection refused", "NewConnectionError", "Name or service"))


def _unreachable(url: str, exc: Exception) -> ServerUnavailable:
    return ServerUnavailable(
        f"cannot reach the farm server at {url} ({type(exc).__name__})",
        hint="is it running? set FARM_URL or run `farm login --url URL`; "
        "for a local farm run `farm up`",
    )


def _body(response: requests.Response) -> Any:
    if response.status_code == 204 or not response.content:
        return None
    if "json" in response.headers.get("Content-Type", ""):
        return response.json()
    return response.text


def _retry_after(response: requests.Response) -> float | None:
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


def server_message(response: requests.Response) -> str:
    """The server's own words: `detail`, or `field: message` lines of a validation error."""
    try:
        data = response.json()
    except ValueError:
        return _text_message(response)
    return _flatten(data) or f"HTTP {response.status_code} {response.reason}"


def _text_message(response: requests.Response) -> str:
    """One line from a non-JSON answer: a proxy's or the web framework's HTML error page is
    reduced to its title, never printed whole."""
    status = f"HTTP {response.status_code} {response.reason}"
    text = response.text.strip()
    if not text:
        return status
    if "html" in response.headers.get("Content-Type", "") or text.lower().startswith("<"):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
        heading = " ".join(title.group(1).split()) if title else ""
        return f"{status}: {heading}" if heading and heading not in status else status
    return " ".join(text.split())[:300]


def _flatten(data: Any, prefix: str = "") -> str:
    if isinstance(data, str):
        return f"{prefix}{data}"
    if isinstance(data, list):
        return "; ".join(_flatten(x, prefix) for x in data if x not in (None, "", [], {}))
    if isinstance(data, dict):
        if "detail" in data and isinstance(data["detail"], str):
            return f"{prefix}{data['detail']}"
        parts = []
        for key, value in data.items():
            label = f"{prefix}{key}: " if key not in ("non_field_errors",) else prefix
            parts.append(_flatten(value, label))
        return "; ".join(p for p in parts if p)
    return f"{prefix}{data}"
