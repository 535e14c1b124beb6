"""`FarmClient`: submit kernels to a farm server, wait for their runs, read results and boards.

    from farm.client import FarmClient
    client = FarmClient()                       # FARM_URL / FARM_TOKEN, else the config file
    sub = client.submit(open("k.py").read(), problem="softmax", hardware=["npu-sim-v1"])
    for run in client.as_completed(sub.run_ids, timeout_s=600):
        print(run.hardware, run.verdict, run.sol_score)

Uses `requests` only; retries are described in farm/client/http.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from farm.client.config import config_load
from farm.client.errors import WaitTimeout
from farm.client.http import Transport
from farm.client.types import FINISHED_STATES, Board, Run, Submission, SubmitRequest
from farm.retry import RetryPolicy

RunRef = int | Run | Submission
DETAIL_POLL_LIMIT = 4  # up to this many pending runs are polled one by one, more by listing
BATCH_CHUNK = 100  # the server accepts FARM_MAX_BATCH (default 200) per request


class FarmClient:
    """A client of one farm server. `url`/`token` default to FARM_URL / FARM_TOKEN, then the
    config file written by `farm login` (see farm.client.config).

    `profile` names a config profile (default FARM_PROFILE; see farm.client.config).
    `timeout_s` bounds each HTTP request; `retries`, `backoff_s` and `max_retry_after_s` shape
    the retries (farm.retry.RetryPolicy, CLIENT policy); `poll_s` / `max_poll_s` bound the
    interval between status polls while waiting.
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout_s: float = 30.0,
        retries: int = 5,
        backoff_s: float = 0.5,
        max_retry_after_s: float = 120.0,
        poll_s: float = 0.5,
        max_poll_s: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
        profile: str | None = None,
    ) -> None:
        config = config_load(url=url, token=token, profile=profile)
        self.url, self.token = config.url, config.token
        policy = RetryPolicy(
            retries=retries, backoff_s=backoff_s, max_retry_after_s=max_retry_after_s
        )
        self.http = Transport(self.url, self.token, timeout_s=timeout_s, policy=policy, sleep=sleep)
        self.poll_s, self.max_poll_s = poll_s, max_poll_s
        self._sleep = sleep

    # --- submitting -------------------------------------------------------------------------
    def submit(
        self,
        source: str,
        *,
        problem: str,
        hardware: str | Sequence[str],
        mode: str = "benchmark",
        suite: str | None = None,
        filename: str | None = None,
        label: str = "",
        private: bool = True,
        language: str | None = None,
    ) -> Submission:
        """Submit one source text (native, KernelBench `ModelNew` or GPU MODE `custom_kernel`
        form, sent unchanged); one run is created per hardware class."""
        request = SubmitRequest(
            source=source,
            problem=problem,
            hardware=[hardware] if isinstance(hardware, str) else list(hardware),
            mode=mode,
            suite=suite,
            filename=filename,
            label=label,
            private=private,
            language=language,
        )
        return Submission.from_json(
            self.http.request("POST", "/api/submissions/", json=request.body())
        )

    def submit_file(self, path: str | Path, **fields: Any) -> Submission:
        """Submit the file at `path` (its name is sent as `filename`)."""
        path = Path(path)
        fields.setdefault("filename", path.name)
        return self.submit(path.read_text(encoding="utf-8"), **fields)

    def submit_batch(
        self, requests: Sequence[SubmitRequest], *, chunk: int = BATCH_CHUNK
    ) -> list[Submission]:
        """Submit many at once (chunks of `chunk` per HTTP request); returns them in order.
        The server checks a whole chunk before creating any of it: one bad item refuses the
        chunk with each fault named by index."""
        created: list[Submission] = []
        for start in range(0, len(requests), chunk):
            body = {"submissions": [r.body() for r in requests[start : start + chunk]]}
            reply = self.http.request("POST", "/api/submissions/", json=body)
            created += [Submission.from_json(s) for s in reply["submissions"]]
        return created

    # --- reading ----------------------------------------------------------------------------
    def submission(self, submission_id: int) -> Submission:
        return Submission.from_json(self.http.request("GET", f"/api/submissions/{submission_id}/"))

    def run(self, run_id: int) -> Run:
        """One run with its result document (when done)."""
        return Run.from_json(self.http.request("GET", f"/api/runs/{run_id}/"))

    def runs(self, *, limit: int = 50, **filters: str | int) -> list[Run]:
        """Your runs, newest first; filters: state, hardware, mode, submission, problem, verdict."""
        params = {k: str(v) for k, v in filters.items() if v is not None}
        found: list[Run] = []
        for page in self._pages("/api/runs/", params):
            found += [Run.from_json(r) for r in page]
            if len(found) >= limit:
                break
        return found[:limit]

    # --- changing ---------------------------------------------------------------------------
    def cancel(self, run_id: int) -> Run:
        """Cancel a run that has not finished (yours, or any as an admin): it fails as
        CANCELLED, a node running it stops. Cancelling it again is harmless; a finished run
        raises BadRequest (409)."""
        return Run.from_json(self.http.request("POST", f"/api/runs/{run_id}/cancel/"))

    def mark_hacked(self, submission_id: int, *, note: str, hacked: bool = True) -> Submission:
        """Admins: take a submission off every board (runs and results are kept; its owner
        reads `note`), or put it back with `hacked=False`."""
        body = {"hacked": hacked, "note": note}
        reply = self.http.request("POST", f"/api/submissions/{submission_id}/hacked/", json=body)
        return Submission.from_json(reply)

    def submissions(self) -> Iterator[Submission]:
        """Your submissions with their runs, newest first, every page."""
        for page in self._pages("/api/submissions/", {}):
            yield from map(Submission.from_json, page)

    def board(self, problem: str, hardware: str, *, suite: str = "core-v1") -> Board:
        return Board.from_json(
            self.http.request("GET", f"/api/boards/{suite}/{problem}/{hardware}/")
        )

    def problems(self, *, suite: str | None = None) -> list[dict[str, Any]]:
        params = {"suite": suite} if suite else None
        return list(self.http.request("GET", "/api/problems/", params=params))

    def hardware(self) -> list[dict[str, Any]]:
        return list(self.http.request("GET", "/api/hardware/"))

    def source(self, submission_id: int) -> str:
        return str(self.http.request("GET", f"/api/submissions/{submission_id}/source/"))

    def token_create(self, *, username: str, password: str, name: str = "farm-cli") -> str:
        """Create an API token with a username and password (basic auth); returns its key."""
        reply = self.http.request(
            "POST", "/api/tokens/", json={"name": name}, auth=(username, password)
        )
        return str(reply["key"])

    def token_check(self) -> None:
        """Raise Refused when the token is missing, invalid or revoked."""
        self.http.request("GET", "/api/tokens/")

    # --- waiting ----------------------------------------------------------------------------
    def as_completed(
        self, runs: Iterable[RunRef], *, timeout_s: float | None = None
    ) -> Iterator[Run]:
        """Yield each run (with its result) as soon as it is done or failed, in finishing order.
        Raises WaitTimeout (holding the unfinished ids) after `timeout_s` seconds."""
        pending = dict.fromkeys(run_ids(runs))
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        delay = self.poll_s
        while pending:
            finished = self._finished(list(pending))
            for run in finished:
                pending.pop(run.id, None)
                yield run
            if not pending:
                return
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise WaitTimeout(
                    f"{len(pending)} run(s) still unfinished after {timeout_s:g} s: "
                    + ", ".join(str(i) for i in list(pending)[:10]),
                    pending=list(pending),
                    hint="wait longer (--timeout) or check later with `farm status`",
                )
            delay = self.poll_s if finished else min(delay * 1.5, self.max_poll_s)
            self._sleep(delay if remaining is None else min(delay, remaining))

    def wait(self, runs: Iterable[RunRef], *, timeout_s: float | None = None) -> list[Run]:
        """Wait for every run; return them in the order given. Raises WaitTimeout."""
        ids = run_ids(runs)
        done = {r.id: r for r in self.as_completed(ids, timeout_s=timeout_s)}
        return [done[i] for i in ids]

    def _finished(self, pending: list[int]) -> list[Run]:
        """The pending runs that have finished, fetched with their results."""
        if len(pending) <= DETAIL_POLL_LIMIT:
            return [r for r in (self.run(i) for i in pending) if r.finished]
        states = self._states(set(pending))
        ids = [i for i in pending if states.get(i, "") in FINISHED_STATES]
        unseen = [i for i in pending if i not in states]
        return [self.run(i) for i in ids] + [r for r in map(self.run, unseen) if r.finished]

    def _states(self, wanted: set[int]) -> dict[int, str]:
        """State by run id from the run list (newest first), paging until all are seen."""
        states: dict[int, str] = {}
        lowest = min(wanted)
        for page in self._pages("/api/runs/", {}):
            for row in page:
                states[int(row["id"])] = str(row.get("state", ""))
            ids = [int(r["id"]) for r in page]
            if not ids or min(ids) <= lowest or wanted <= states.keys():
                break
        return states

    def _pages(self, path: str, params: dict[str, str]) -> Iterator[list[dict[str, Any]]]:
        """Pages of a cursor-paginated list (`{"next": URL, "results": [...]}`)."""
        reply = self.http.request("GET", path, params=params or None)
        while True:
            if isinstance(reply, list):
                yield reply
                return
            yield list(reply.get("results") or [])
            if not reply.get("next"):
                return
            reply = self.http.request("GET", reply["next"])


def run_ids(runs: Iterable[RunRef]) -> list[int]:
    """Run ids of a mix of ids, Runs and Submissions (a submission stands for all its runs)."""
    ids: list[int] = []
    for item in runs:
        if isinstance(item, Submission):
            ids += item.run_ids
        elif isinstance(item, Run):
            ids.append(item.id)
        else:
            ids.append(int(item))
    return list(dict.fromkeys(ids))
