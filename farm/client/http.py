"""HTTP with retries (farm.retry's engine, CLIENT policy: a POST is retried only when the
server cannot have acted on it), and the server's answers turned into ClientError kinds."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import requests

from farm import retry
from farm.client.errors import BadRequest, ClientError, Refused, ServerUnavailable
from farm.retry import RETRY_STATUSES, RetryPolicy, retry_after_s

__all__ = ["RetryPolicy", "Transport", "server_message"]
USER_AGENT = "farm-client/1"


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
        self.policy = policy or retry.CLIENT
        self.sleep = sleep
        self.session = requests.Session()
        self.session.headers["User-Agent"] = USER_AGENT
        self.session.headers["Accept"] = "application/json"
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else self.base_url + path

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """Send with retries (farm.retry); return the decoded JSON (or text). Raises
        ClientError kinds."""
        url = self.url(path)
        outcome = retry.send(
            lambda: self.session.request(method, url, timeout=self.timeout_s, **kwargs),
            method=method,
            policy=self.policy,
            sleep=self.sleep,
        )
        if outcome.response is None:
            raise self._unanswered(method, url, outcome.error)
        if outcome.response.status_code < 400:
            return _body(outcome.response)
        raise _failure(method, url, outcome.response)

    def _unanswered(self, method: str, url: str, exc: Exception | None) -> Exception:
        if isinstance(exc, requests.ConnectionError):
            return _unreachable(url, exc)
        if isinstance(exc, requests.Timeout):
            return ServerUnavailable(
                f"{method} {url}: no answer within {self.timeout_s:.0f} s ({type(exc).__name__})",
                hint="the server may be overloaded; retry later",
            )
        assert exc is not None
        return exc


def _failure(method: str, url: str, response: requests.Response) -> ClientError:
    status = response.status_code
    message = server_message(response)
    if status == 429:
        return Refused(message, status=status, retry_after=retry_after_s(response))
    if status == 503 and retry_after_s(response) is not None:
        return ServerUnavailable(message, status=status)
    if status in RETRY_STATUSES:
        return ServerUnavailable(
            f"{method} {url} failed with HTTP {status}: {message}",
            status=status,
            hint="the server failed; retry later or tell its operator",
        )
    if status == 413:
        too_large = "a kernel is one source file of at most a few hundred KiB: check the path"
        return BadRequest(message, status=status, hint=too_large)
    if status in (401, 403):
        hint = "log in with `farm login` or set FARM_TOKEN" if status == 401 else None
        return Refused(message, status=status, hint=hint)
    return BadRequest(message, status=status)


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
