"""One job, start to end, as a sequence of steps:

    claim -> start -> suite + source -> evaluate -> (profile) -> upload artifacts -> post result

Outcomes (`JobRunner.run` returns one): `done` (result recorded), `claim_lost` (another node
holds or finished the run, or this node was presumed dead: the job is dropped), `duplicate`
(this node is already running that run on another slot), `failed` (reported as a failure the
server will not retry), `released` (reported as a retryable failure: the server requeues it).
RetryableError before the claim escapes: the caller puts the message back in the queue.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents import phases, profiling, state
from agents.client import ServerClient
from agents.config import AgentConfig, time_limits
from agents.devices import Slot
from agents.errors import ClaimLost, PermanentError, RetryableError, SuiteMismatch
from agents.state import RunLock, SlotState
from agents.suites import SuiteCache
from farm.node_api import Job
from farm.result import Result, ResultSchemaError

log = logging.getLogger(__name__)
RESULT_PATIENCE_S = 600.0  # how long a finished result is retried while the server is away
HARNESS_ERROR_CODES = frozenset({"HARNESS_ERROR"})
Evaluate = Callable[..., dict[str, Any]]
SelfTest = Callable[..., list[Any]]  # agents.health.selftest: (slot, cfg, *, timeout_s) -> problems


def _selftest(slot: Slot, cfg: AgentConfig, *, timeout_s: float) -> list[Any]:
    from agents.health import selftest

    return selftest(slot, cfg, timeout_s=timeout_s)


class Cancelled(Exception):
    """The agent is cancelling the current job (second SIGTERM, a soft time limit, a harness
    that failed). `node_fault`: the node is to blame (not charged; retried on another node)."""

    def __init__(
        self, code: str, detail: str, *, retryable: bool, node_fault: bool | None = None
    ) -> None:
        super().__init__(detail)
        self.code, self.detail, self.retryable = code, detail, retryable
        self.node_fault = node_fault


@dataclass
class Timings:
    """Seconds spent in each step of one job."""

    queue_wait: float | None = None
    claim: float = 0.0
    prepare: float = 0.0
    evaluate: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    profile: float = 0.0
    upload: float = 0.0
    report: float = 0.0
    total: float = 0.0


@dataclass
class Outcome:
    status: str
    run: int
    attempt: int | None = None
    verdict: str | None = None
    mode: str = ""
    timings: Timings = field(default_factory=Timings)
    detail: str = ""


def default_evaluate(source_path: str | Path, **options: Any) -> dict[str, Any]:
    from farm.harness.supervisor import evaluate

    return evaluate(source_path, **options).to_json()  # the document leaves the harness here


class JobRunner:
    """Runs jobs for one slot. `evaluate` is farm.harness.supervisor.evaluate (tests may pass
    a stand-in that does no real work)."""

    def __init__(
        self,
        cfg: AgentConfig,
        client: ServerClient,
        slot: Slot,
        *,
        evaluate: Evaluate = default_evaluate,
        suites: SuiteCache | None = None,
        selftest: SelfTest | None = None,
    ) -> None:
        self.cfg, self.client, self.slot, self.evaluate = cfg, client, slot, evaluate
        self.selftest = selftest or _selftest
        self.suites = suites or SuiteCache(cfg.home / "suite-cache", client)
        node_dir = cfg.state_dir / _safe(cfg.node_name)
        self.state = SlotState(node_dir, slot.number)
        self.state_dir = node_dir
        self.lock_dir = node_dir / "locks"
        self.current_run: int | None = None
        self.timeout_errors: tuple[type[BaseException], ...] = ()  # the soft time limit's
        self._pool: Any = None

    def warm_pool(self) -> Any:
        """This slot's pre-started harness workers (farm.harness.pool), made on first use, so a
        warm node does not start Python, torch and a sandbox for every job. FARM_AGENT_WARM_POOL=0
        turns it off; tests that pass their own `evaluate` never start one."""
        if self.evaluate is not default_evaluate or not self.cfg.warm_pool:
            return None
        if self._pool is None:
            import atexit

            from farm.harness.pool import WorkerPool

            self._pool = WorkerPool(
                device=self.slot.device,
                device_index=self.slot.gpu_index or 0,
                sandbox=self.cfg.sandbox,
            )
            atexit.register(self._pool.close)
        return self._pool

    def run(self, run_id: int) -> Outcome:
        lock = RunLock(self.lock_dir, run_id)
        if not lock.acquire():
            return Outcome("duplicate", run_id, detail="another slot of this node runs it")
        self.current_run = run_id
        try:
            return self._run(run_id)
        finally:
            self.current_run = None
            self.state.clear()
            state.unmark_abandoned(self.state_dir, run_id)
            lock.release()

    def stop_if_abandoned(self) -> None:
        """Raise Cancelled in the running job when the agent marked its run abandoned (the
        server gave it to another node): called from the slot's SIGUSR2 handler."""
        run = self.current_run
        if run is not None and state.is_abandoned(self.state_dir, run):
            raise Cancelled(
                "ABANDONED", f"run {run} is no longer this node's; stopped", retryable=False
            )

    def release_stale(self) -> list[int]:
        """Release the run this slot's previous process left behind when it died (a new slot
        process starts clean): the server requeues it at once."""
        from agents.heartbeat import release_runs

        mine = [c for c in state.live_and_dead(self.state_dir)[1] if c.slot == self.slot.number]
        return release_runs(self.client, self.state_dir, mine, work_dir=self.cfg.home / "work")

    def _run(self, run_id: int) -> Outcome:
        started = time.monotonic()
        out = Outcome("claim_lost", run_id)
        try:
            job = self.client.claim(run_id, self.slot.gpu_index)  # RetryableError: requeue it
        except ClaimLost as exc:
            out.detail = str(exc)
            return out
        out.attempt, out.mode = job.attempt, job.mode
        out.timings.claim = time.monotonic() - started
        out.timings.queue_wait = _queue_wait(job)
        self.state.set(run_id, job.attempt)
        try:
            self._evaluate_and_report(job, out)
        except ClaimLost as exc:
            out.status, out.detail = "claim_lost", str(exc)
        except Cancelled as exc:
            self._fail(
                job, out, exc.code, exc.detail, retryable=exc.retryable, node_fault=exc.node_fault
            )
        except SuiteMismatch as exc:
            self._fail(job, out, "SUITE_UNAVAILABLE", str(exc), retryable=False)
        except ResultSchemaError as exc:
            self._fail(job, out, "RESULT_INVALID", str(exc), retryable=False)
        except RetryableError as exc:
            self._fail(job, out, "SERVER_UNREACHABLE", str(exc), retryable=True)
        except PermanentError as exc:
            self._fail(job, out, "AGENT_REFUSED", str(exc), retryable=False)
        out.timings.total = time.monotonic() - started
        return out

    def _evaluate_and_report(self, job: Job, out: Outcome) -> None:
        run_id, attempt = job.run, job.attempt
        self._start(job)
        workdir = self.cfg.home / "work" / f"run-{run_id}-{attempt}"
        try:
            t0 = time.monotonic()
            suite = self.suites.ensure(job.suite.name, job.suite.hash)
            source = self._stage_source(job, workdir)
            out.timings.prepare = time.monotonic() - t0
            document = self._evaluate(job, source, suite, out.timings)
            if _harness_suspect(document):
                self._check_node(f"the harness reported its own error ({_harness_codes(document)})")
            artifacts = self._artifacts(job, document, source, suite, workdir, out.timings)
            names = self._upload(job, artifacts, out.timings)
            result = Result.from_json(document)  # ResultSchemaError: the harness's own fault
            t0 = time.monotonic()
            self._post_result(job, result, names)
            out.timings.report = time.monotonic() - t0
            out.status, out.verdict = "done", result.verdict.value
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _stage_source(self, job: Job, workdir: Path) -> Path:
        text = job.source
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if job.source_sha256 and digest != job.source_sha256:
            raise PermanentError(
                f"run {job.run}: the source hashes to {digest}, the job says "
                f"{job.source_sha256}; not evaluating it"
            )
        workdir.mkdir(parents=True, exist_ok=True)
        path = workdir / "submission.py"
        path.write_text(text, encoding="utf-8")
        return path

    def _evaluate(self, job: Job, source: Path, suite: str, timings: Timings) -> dict[str, Any]:
        from farm.sandbox import Limits

        _, hard = time_limits(job.mode, job.time_limits.to_json())
        options: dict[str, Any] = {
            "problem": job.problem,
            "suite": suite,
            "device": self.slot.device,
            "mode": job.mode,
            "sandbox": self.cfg.sandbox,
            "device_index": self.slot.gpu_index or 0,
            "limits": Limits(wall_seconds=hard),
        }
        if self.slot.kind.gpu:
            options["hardware"] = self.slot.hardware
        if self.cfg.workloads:
            options["workloads"] = self.cfg.workloads
        pool = self.warm_pool()
        if pool is not None:
            options["pool"] = pool  # the supervisor's per-request timeouts bound each job
        t0 = time.monotonic()
        try:
            with phases.observe() as spent:
                document = self.evaluate(source, **options)
        except Cancelled:
            raise
        except self.timeout_errors as exc:
            raise Cancelled(
                "TIMEOUT", f"the evaluation passed its soft time limit ({exc})", retryable=False
            ) from exc
        except Exception as exc:
            if not _node_side(exc):
                raise Cancelled(
                    "SUBMISSION_UNUSABLE", f"{type(exc).__name__}: {exc}", retryable=False
                ) from exc
            detail = f"{type(exc).__name__}: {exc}"
            self._check_node(detail)
            raise Cancelled("HARNESS_FAILED", detail, retryable=True, node_fault=True) from exc
        finally:
            timings.evaluate = time.monotonic() - t0
        timings.phases = {k: round(v, 4) for k, v in spent.items()}
        return document

    def _artifacts(
        self,
        job: Job,
        document: dict[str, Any],
        source: Path,
        suite: str,
        workdir: Path,
        timings: Timings,
    ) -> dict[str, tuple[bytes | Path, str]]:
        logs = document.get("logs", {}).get("worker_stderr", "")
        # the result document is posted, not uploaded: what the server recorded is the record
        out: dict[str, tuple[bytes | Path, str]] = {
            "worker.log": (str(logs).encode(), "text/plain")
        }
        if job.mode == "profile":
            t0 = time.monotonic()
            prof = profiling.profile(
                source,
                workdir / "profile",
                problem=job.problem,
                suite=suite,
                device=self.slot.device,
                sandbox=self.cfg.sandbox,
            )
            timings.profile = time.monotonic() - t0
            for name, path in prof.artifacts.items():
                out[name] = (path, "application/octet-stream")
            if prof.note:
                document.setdefault("reasons_extra", []).append(
                    {"code": "PROFILE_NOTE", "detail": prof.note[-2000:]}
                )
        return out

    def _upload(
        self, job: Job, artifacts: dict[str, tuple[bytes | Path, str]], t: Timings
    ) -> list[str]:
        """Upload each artifact, kept and retried like the result while storage or the server
        is away (RESULT_PATIENCE_S in all); one refused for good is left out (logged)."""
        t0 = time.monotonic()
        deadline = t0 + RESULT_PATIENCE_S
        names = []
        for name, (data, content_type) in artifacts.items():
            body = data.read_bytes() if isinstance(data, Path) else data

            def put(name: str = name, content_type: str = content_type, body: bytes = body) -> None:
                target = self.client.artifact_url(job.run, job.attempt, name, content_type)
                self.client.put_artifact(target, body)

            try:
                _until(deadline, f"run {job.run}: artifact {name} kept", put)
                names.append(name)
            except ClaimLost:
                raise
            except RetryableError as exc:
                log.warning("run %s: artifact %s not uploaded: %s", job.run, name, exc)
            except PermanentError as exc:
                log.warning("run %s: artifact %s refused: %s", job.run, name, exc)
        t.upload = time.monotonic() - t0
        return names

    def _start(self, job: Job) -> None:
        """running, retried while the server is away for as long as the lease lasts: the node
        holds the run while its heartbeats list it, and the server takes nothing back during an
        outage of its own (docs/operations.md); a refusal (ClaimLost) drops the job."""
        deadline = time.monotonic() + max(RESULT_PATIENCE_S, job_lease_s(job))
        _until(
            deadline,
            f"run {job.run}: server unreachable at start",
            lambda: self.client.start(job.run, job.attempt),
        )

    def _check_node(self, why: str) -> None:
        """An evaluation failed in a way that may be the node's: self-test this slot now. A
        failed self-test makes the node unhealthy (agents.health) and this run a NODE_FAULT
        (not charged, run elsewhere); a passing one leaves the outcome as it is."""
        from agents import health

        problems = self.selftest(self.slot, self.cfg, timeout_s=self.cfg.selftest_timeout_s)
        if not problems:
            log.info("self-test after %s: the node works", why)
            return
        health.slot_failure_note(self.state_dir, self.slot.number, problems)
        raise Cancelled(
            "NODE_FAULT",
            f"{why}; the node's self-test failed: {problems[0].detail}",
            retryable=True,
            node_fault=True,
        )

    def _post_result(self, job: Job, result: Result, names: list[str]) -> None:
        """Post until the server answers; the post is idempotent (same attempt, same document)."""
        _until(
            time.monotonic() + RESULT_PATIENCE_S,
            f"run {job.run}: server unreachable, result kept",
            lambda: self.client.result(job.run, job.attempt, result, names),
        )
        self.current_run = None  # recorded: a stop request now has nothing to stop

    def _fail(
        self,
        job: Job,
        out: Outcome,
        code: str,
        detail: str,
        *,
        retryable: bool,
        node_fault: bool | None = None,
    ) -> None:
        out.status = "released" if retryable else "failed"
        out.detail = detail
        try:
            self.client.failure(
                job.run,
                job.attempt,
                code=code,
                detail=detail,
                retryable=retryable,
                node_fault=node_fault,
            )
        except ClaimLost as exc:
            out.status, out.detail = "claim_lost", str(exc)
        except (RetryableError, PermanentError) as exc:
            # the server's reaper takes the run back if this node goes away; log and move on
            log.error("run %s: could not report %s: %s", job.run, code, exc)


def _node_side(exc: Exception) -> bool:
    """An exception out of the harness is the node's (its sandbox, its disk, a bug of the
    trusted side), unless the harness says the submission cannot be used at all."""
    from farm.errors import SubmissionError

    return not isinstance(exc, SubmissionError)


def _harness_codes(document: dict[str, Any]) -> str:
    codes = [r.get("code") for r in document.get("reasons", []) if isinstance(r, dict)]
    for w in document.get("workloads", []):
        codes += [e.get("code") for e in (w.get("errors") or []) if isinstance(e, dict)]
    return ", ".join(sorted({str(c) for c in codes if c in HARNESS_ERROR_CODES}))


def _harness_suspect(document: dict[str, Any]) -> bool:
    """The document blames the harness itself (HARNESS_ERROR), which a sick node shows as
    RUNTIME_ERROR for every kernel. The claim comes from the submission's process, so it is
    only a reason to self-test the node, never a verdict of its own."""
    return bool(_harness_codes(document))


def job_lease_s(job: Job) -> float:
    """How long the server lets the node hold a run without hearing it (s), when it says."""
    return float(job.lease_s or 0.0)


def _queue_wait(job: Job) -> float | None:
    """Seconds from the server handing the run to the broker to the claim, as the server
    measured them (`queued_s`): the node's own clock is never compared with the server's."""
    queued = job.queued_s
    return max(0.0, float(queued)) if queued is not None else None


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "node"


def outcome_dict(outcome: Outcome) -> dict[str, Any]:
    return asdict(outcome)


PATIENCE_STEP_S = 2.0  # between tries of a call the agent keeps until a deadline


def _until(deadline: float, what: str, call: Callable[[], object]) -> None:
    """`call()` tried again every PATIENCE_STEP_S while it raises RetryableError (the server or
    storage away; each try already has the client's own retries, farm.retry), until the
    monotonic `deadline`; then its last error is raised. Other errors pass at once."""
    while True:
        try:
            call()
            return
        except RetryableError:
            if time.monotonic() > deadline:
                raise
            log.warning("%s; retrying", what)
            time.sleep(PATIENCE_STEP_S)
