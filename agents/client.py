"""The server's node-facing REST API (/api/agent/...), as the agent uses it.

Every call has a timeout; connection errors, timeouts, 429 and 5xx are retried with exponential
backoff (farm.retry's engine, NODE policy: the node API is idempotent) and then raised as
RetryableError; other 4xx answers are PermanentError at once (409 and 403 on a run are
ClaimLost: another node holds it, or it was taken back from this one).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import requests

from agents import __version__
from agents.errors import ClaimLost, PermanentError, RetryableError
from farm import retry
from farm.node_api import HeartbeatAck, Job
from farm.result import Result
from farm.wire import WireError

T = TypeVar("T")

log = logging.getLogger(__name__)


class ServerClient:
    """One node's session with the server. `token` is the node token (fn_...)."""

    def __init__(
        self,
        base_url: str,
        token: str = "",
        *,
        timeout_s: float = 30.0,
        attempts: int = 5,
        backoff_s: float = 0.5,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self.attempts = attempts
        self.policy = dataclasses.replace(retry.NODE, retries=attempts - 1, backoff_s=backoff_s)
        self.session = requests.Session()
        self.session.headers["User-Agent"] = f"farm-agent/{__version__}"

    # --- node ----------------------------------------------------------------------------

    def enroll(self, *, secret: str, name: str, hardware: list[str]) -> str:
        """Create this node with the operator's enrolment secret; returns the node token."""
        body = self.call(
            "POST",
            "/api/agent/enroll/",
            json={"name": name, "hardware": hardware},
            headers={"X-Farm-Enroll": secret},
            auth=False,
        )
        return str(body["token"])

    def register(self, *, hardware: list[str], devices: list[dict], hostname: str) -> dict:
        body = {
            "hardware": hardware,
            "devices": devices,
            "agent_version": __version__,
            "hostname": hostname,
        }
        return self.call("POST", "/api/agent/register/", json=body)

    def heartbeat(
        self,
        *,
        current_runs: list[int],
        devices: list[dict] | None,
        health: dict[str, Any] | None = None,
    ) -> HeartbeatAck:
        body: dict[str, Any] = {"current_runs": current_runs}
        if devices is not None:
            body["devices"] = devices
        if health is not None:
            body["health"] = health
        answer = self.call("POST", "/api/agent/heartbeat/", json=body)
        return _read(HeartbeatAck.from_json, answer, "the heartbeat's answer")

    # --- runs ----------------------------------------------------------------------------

    def claim(self, run_id: int, device_index: int | None = None) -> Job:
        """The job of a queued run, now held by this node (to run on its GPU `device_index`,
        when it has one); ClaimLost when another node won."""
        body = {} if device_index is None else {"device_index": device_index}
        answer = self.call("POST", f"/api/agent/runs/{run_id}/claim/", json=body, run=run_id)
        return _read(Job.from_json, answer, f"the job of run {run_id}")

    def start(self, run_id: int, attempt: int) -> dict:
        return self.call(
            "POST", f"/api/agent/runs/{run_id}/start/", json={"attempt": attempt}, run=run_id
        )

    def result(self, run_id: int, attempt: int, result: Result, artifacts: list[str]) -> dict:
        """Post the result; the server stores it once (a repeated post answers duplicate)."""
        body = {"attempt": attempt, "result": result.to_json(), "artifacts": artifacts}
        return self.call(
            "POST",
            f"/api/agent/runs/{run_id}/result/",
            json=body,
            run=run_id,
            headers={"Idempotency-Key": f"run-{run_id}-attempt-{attempt}"},
        )

    def failure(
        self,
        run_id: int,
        attempt: int,
        *,
        code: str,
        detail: str,
        retryable: bool,
        node_fault: bool | None = None,
    ) -> dict:
        """Report that the run could not be evaluated; `retryable` asks the server to requeue
        it (this is also how a cancelled run is released). A retryable failure is the node's
        fault unless `node_fault` is False: not charged, retried on another node."""
        failure: dict[str, Any] = {"code": code, "detail": detail[-10000:], "retryable": retryable}
        if node_fault is not None:
            failure["node_fault"] = node_fault
        body = {"attempt": attempt, "failure": failure}
        return self.call("POST", f"/api/agent/runs/{run_id}/result/", json=body, run=run_id)

    def artifact_url(self, run_id: int, attempt: int, name: str, content_type: str) -> dict:
        body = {"attempt": attempt, "name": name, "content_type": content_type}
        return self.call("POST", f"/api/agent/runs/{run_id}/artifacts/", json=body, run=run_id)

    def put_artifact(self, target: dict, data: bytes) -> None:
        """PUT bytes to the presigned (or server-signed) URL `target` from artifact_url."""
        self._send(
            target.get("method", "PUT"),
            target["url"],
            data=data,
            headers=target.get("headers") or {},
            auth=False,
        )

    def download(self, url: str) -> bytes:
        """GET a URL (absolute, or a path on the server) with the node token."""
        full = url if url.startswith(("http://", "https://")) else self.base_url + url
        return self._send("GET", full, auth=True).content

    # --- plumbing ------------------------------------------------------------------------

    def call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        headers: dict | None = None,
        auth: bool = True,
        run: int | None = None,
    ) -> Any:
        response = self._send(
            method, self.base_url + path, json=json, headers=headers, auth=auth, run=run
        )
        return response.json() if response.content else {}

    def _send(
        self,
        method: str,
        url: str,
        *,
        auth: bool,
        run: int | None = None,
        headers: dict | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        all_headers = dict(headers or {})
        if auth and self.token:
            all_headers["Authorization"] = f"Bearer {self.token}"
        outcome = retry.send(
            lambda: self.session.request(
                method, url, headers=all_headers, timeout=self.timeout_s, **kwargs
            ),
            method=method,
            policy=self.policy,
        )
        response = outcome.response
        if response is not None and response.status_code < 400:
            return response
        if response is not None and not _transient(response):
            raise _refused(method, url, response, run)
        last = (
            f"HTTP {response.status_code}: {_detail(response)}"
            if response is not None
            else f"{type(outcome.error).__name__}: {outcome.error}"
        )
        raise RetryableError(f"{method} {url}: gave up after {outcome.attempts} attempts ({last})")


def _read(parse: Callable[[Any], T], answer: Any, what: str) -> T:
    """`answer` read by `parse`; a server that answers in another shape is refused for good."""
    try:
        return parse(answer)
    except WireError as exc:
        raise PermanentError(f"{what} is not understood: {exc}") from None


def _transient(response: requests.Response) -> bool:
    return response.status_code == 429 or response.status_code in retry.RETRY_STATUSES


def _detail(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(body, dict) and "detail" in body:
        return str(body["detail"])
    return str(body)[:300]


def _refused(method: str, url: str, response: requests.Response, run: int | None) -> Exception:
    status = response.status_code
    message = f"{method} {url}: HTTP {status}: {_detail(response)}"
    if run is not None and status in (403, 404, 409):
        return ClaimLost(message, status=status)
    return PermanentError(message, status=status)
