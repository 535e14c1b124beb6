"""Timing the baselines: the problem's reference in eager mode and under torch.compile, each in
a worker of its own that never loads the submission, timed as the candidate is
(farm.harness.timed); reused from this node's cache where it has them (farm.harness.baselines).
A baseline that fails is said in the result (BASELINE_FAILED); the candidate's verdict stands."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from farm.harness import baselines, replies, report, timing_stats
from farm.harness.case import Case
from farm.harness.channel import WorkerDied, WorkerProcess
from farm.harness.record import Report, WorkloadRecord
from farm.harness.replies import BadReply
from farm.harness.timed import Timer
from farm.harness.workers import Workers
from farm.result import Mode, Reason
from farm.suite.model import Workload


@dataclass(frozen=True)
class StoredBaseline:
    """A baseline as this node's cache keeps it: what was measured, the supervisor's wall time
    around it (ms), the thermal gate's reading, the warm-up (ms) and when (`at`, epoch s)."""

    measured: timing_stats.Measured
    wall_ms: float
    thermal: dict[str, Any]
    warmup_ms: float
    at: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.measured.to_json(),
            "wall_ms": self.wall_ms,
            "thermal": self.thermal,
            "warmup_ms": self.warmup_ms,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StoredBaseline | None:
        """The stored entry, or None when it is not one (written by another version). Numbers
        are kept as stored: the result shows them as the measurement recorded them."""
        try:
            measured = timing_stats.Measured.from_json(data["summary"])
            wall_ms, warmup_ms, thermal = data["wall_ms"], data["warmup_ms"], data["thermal"]
        except (KeyError, TypeError, ValueError):
            return None
        numbers = all(isinstance(x, int | float) for x in (wall_ms, warmup_ms))
        if not numbers or not isinstance(thermal, dict):
            return None
        return cls(measured, wall_ms, thermal, warmup_ms, data.get("at"))


class Baselines:
    """The baselines of one evaluation's timed workloads, into their records."""

    def __init__(
        self,
        case: Case,
        workers: Workers,
        timer: Timer,
        report: Report,
        records: dict[str, WorkloadRecord],
    ) -> None:
        self.case, self.workers, self.timer = case, workers, timer
        self.report, self.records = report, records

    def run(self, timed: list[Workload]) -> None:
        kinds = ["eager"] + (
            ["compile"]
            if self.case.target.compile_baseline(self.case.opts.compile_baseline)
            else []
        )
        cache = self.cache()
        with tempfile.TemporaryDirectory(prefix="farm-base-") as tmp:
            for kind in kinds:
                todo = [w for w in timed if not self._cached(cache, kind, w)]
                if todo:
                    self._measure(Path(tmp) / kind, kind, todo, cache)

    def cache(self) -> baselines.BaselineCache | None:
        """This node's cache of baselines; None in leaderboard mode, which re-measures the
        reference beside the candidate (farm.harness.baselines)."""
        case = self.case
        if case.mode == Mode.LEADERBOARD or not baselines.enabled():
            return None
        scope = baselines.Scope(
            suite=case.suite.name,
            suite_hash=case.suite.hash,
            problem=case.problem.name,
            hardware=case.target.hardware,
            device=case.target.device,
            device_index=case.opts.device_index,
            policy=case.policy,
        )
        return baselines.BaselineCache(scope)

    def _cached(self, cache: baselines.BaselineCache | None, kind: str, w: Workload) -> bool:
        data = cache.get(w.id, kind) if cache is not None else None
        hit = StoredBaseline.from_json(data) if data is not None else None
        if hit is None:
            return False
        record = self.records[w.id]
        report.add_baseline(
            record, kind, hit.measured, hit.wall_ms, thermal=hit.thermal, warmup_ms=hit.warmup_ms
        )
        timing = record.baseline_timing[kind]  # reused, not re-measured:
        record.baseline_timing[kind] = timing_stats.with_details(timing, measured_at=hit.at)
        return True

    def _measure(
        self,
        workdir: Path,
        kind: str,
        timed: list[Workload],
        cache: baselines.BaselineCache | None,
    ) -> None:
        request = {
            "op": "load",
            "builtin": "reference",
            "compile": kind == "compile",
            "axes": timed[0].axes,
            "problem_dir": str(self.case.problem.directory.resolve()),
        }
        try:
            worker = self.workers.acquire(kind, workdir, timed)
        except WorkerDied as exc:
            self._failed(kind, exc.detail)
            return
        try:
            header, _ = worker.request(request, timeout=self.case.limit_policy.load_s)
            loaded = replies.load(header)
            if loaded.failure is not None:
                self._failed(kind, loaded.failure.detail)
                return
            for w in timed:
                self._one(worker, kind, w, cache)
        except (WorkerDied, BadReply) as exc:
            self._failed(kind, str(exc))
        finally:
            self.workers.release(kind, worker)

    def _one(
        self,
        worker: WorkerProcess,
        kind: str,
        w: Workload,
        cache: baselines.BaselineCache | None,
    ) -> None:
        seed = self.case.seed(w, "baseline", kind)
        policy = self.case.policy
        driver = self.timer.driver(worker, w, policy, watch=False)
        self.timer.feed(driver, w, seed)
        driver.call_s += self.case.limit_policy.compile_s if kind == "compile" else 0.0
        gate = self.case.target.cool_down()
        run = driver.run(self.timer.request(w, policy))
        if run.failure is not None:
            self._failed(f"{kind} {w.id}", run.failure.detail)
            return
        stored = StoredBaseline(run.summary(), run.wall_ms, gate, policy.warmup_ms)
        report.add_baseline(
            self.records[w.id],
            kind,
            stored.measured,
            run.wall_ms,
            thermal=gate,
            warmup_ms=policy.warmup_ms,
        )
        if cache is not None:
            cache.put(w.id, kind, stored.to_json())

    def _failed(self, what: str, detail: str) -> None:
        self.report.reasons.append(
            Reason("BASELINE_FAILED", f"{what}: {replies.text(detail, 500)}")
        )
