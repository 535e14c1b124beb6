"""What an evaluation records while it runs, typed: one `WorkloadRecord` per workload and the
`Report` of the whole evaluation. Both are mutable (the judge fills them step by step); they
become the immutable farm.result types in one place, farm.harness.report.finish, and JSON only
at the edge (`Result.to_json`)."""

from __future__ import annotations

import contextlib
import hashlib
import platform
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from farm import __version__
from farm.harness.host_load import HostLoad
from farm.harness.timing_stats import with_details
from farm.result import Environment, Finding, Mode, Reason, TimingSummary, WorkloadStatus
from farm.suite.model import Problem, Workload

BASELINES = ("eager", "compile")


@dataclass
class Checks:
    """A workload's correctness checks: `rounds` checked calls with their error statistics and
    each passed round's wall (ms, the trusted side's clock); the check path's trusted allowance
    (`overhead_ms`, `floor_ms`, farm.harness.report.set_yardsticks); npu-sim's `replay` check."""

    rounds: int | None = None
    stats: dict[str, float] = field(default_factory=dict)
    walls_ms: list[float] | None = None
    overhead_ms: float | None = None
    floor_ms: float | None = None
    replay: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.rounds is None else {"rounds": self.rounds}
        out.update(self.stats)
        optional = {
            "walls_ms": self.walls_ms,
            "overhead_ms": self.overhead_ms,
            "floor_ms": self.floor_ms,
            "replay": self.replay,
        }
        return {**out, **{k: v for k, v in optional.items() if v is not None}}


@dataclass
class WorkloadRecord:
    """One workload as the judge fills it in (farm.result.WorkloadEntry when finished). Times in
    ms; `sol` the speed-of-light bound's breakdown, `floor_ms` the physical floor."""

    id: str
    status: WorkloadStatus
    errors: list[Reason]
    model: Any = None
    axes: dict[str, Any] = field(default_factory=dict)
    dtype: Any = None
    flops: Any = None
    bytes: Any = None
    time_ms: float | None = None
    timing: TimingSummary | None = None
    baseline_ms: dict[str, float | None] = field(default_factory=lambda: dict.fromkeys(BASELINES))
    baseline_timing: dict[str, TimingSummary] = field(default_factory=dict)
    sol_ms: float | None = None
    sol: dict[str, Any] | None = None
    floor_ms: float | None = None
    sol_score: float | None = None
    speedup: dict[str, float | None] = field(default_factory=lambda: dict.fromkeys(BASELINES))
    fraction_of_sol: float | None = None
    secret: bool = False
    checks: Checks | None = None
    simulation: dict[str, Any] | None = None
    memory: dict[str, int] | None = None
    host: HostLoad | None = None

    @classmethod
    def new(
        cls, problem: Problem, w: Workload, status: WorkloadStatus, errors: list[Reason]
    ) -> WorkloadRecord:
        """A workload's record before it is timed."""
        return cls(
            id=w.id,
            status=status,
            errors=list(errors),
            model=w.model,
            axes=w.axes,
            dtype=w.dtype,
            flops=problem.flop_count(w),
            bytes=problem.compulsory_bytes(w),
        )

    @property
    def passed(self) -> bool:
        return self.status == WorkloadStatus.PASSED

    def add_timing_details(self, **details: Any) -> None:
        """Add keys to the candidate timing's details (the harness's own yardsticks)."""
        if self.timing is not None:
            self.timing = with_details(self.timing, **details)

    def extra(self) -> dict[str, Any]:
        """The keys farm.result.WorkloadEntry does not model, in the order the document has."""
        out: dict[str, Any] = {
            "model": self.model,
            "axes": self.axes,
            "dtype": self.dtype,
            "sol": self.sol,
            "flops": self.flops,
            "bytes": self.bytes,
        }
        optional = {
            "correctness": self.checks.to_json() if self.checks is not None else None,
            "simulation": self.simulation,
            "memory": self.memory,
            "host": self.host.to_json() if self.host is not None else None,
            "floor_ms": self.floor_ms,
        }
        return {**out, **{k: v for k, v in optional.items() if v is not None}}


@dataclass
class Setting:
    """Where the evaluation runs, as the result's `environment` says it (the device's readings
    `before` and `after`, the sandbox and its limits, how outputs reach the trusted side)."""

    output_transport: str = ""
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    sandbox: str | None = None
    sandbox_note: str | None = None
    limits: dict[str, int | None] | None = None  # the sandbox's memory limit (bytes)

    def to_environment(self) -> Environment:
        extra: dict[str, Any] = {"output_transport": self.output_transport}
        if self.sandbox_note:
            extra["sandbox_note"] = self.sandbox_note
        if self.limits is not None:
            extra["limits"] = self.limits
        return Environment(
            farm=__version__,
            python=platform.python_version(),
            host=platform.node(),
            sandbox=self.sandbox,
            before=self.before,
            after=self.after,
            extra=extra,
        )


class Phases:
    """Where the evaluation's wall time went, by phase (seconds)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        """Count the wall time of a block as phase `name`."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self._add(name, time.perf_counter() - start)

    def move(self, source: str, target: str, seconds: float) -> None:
        """Count `seconds` spent inside phase `source` as phase `target` instead."""
        if seconds > 0:
            self._add(source, -seconds)
            self._add(target, seconds)

    def _add(self, name: str, seconds: float) -> None:
        self.seconds[name] = round(self.seconds.get(name, 0.0) + seconds, 4)


@dataclass
class Report:
    """The evaluation-wide part of the result as the judge fills it in: the guard's findings,
    causes that are no one workload's (`reasons`, first in the result), a COMPILE_ERROR seen
    wherever the build failed, the environment, the submission's form and the workers' log."""

    mode: Mode
    source: str
    fresh_seed: bool
    findings: list[Finding] = field(default_factory=list)
    reasons: list[Reason] = field(default_factory=list)
    compile_error: bool = False
    setting: Setting = field(default_factory=Setting)
    form: str | None = None
    worker_stderr: str | None = None
    phases: Phases = field(default_factory=Phases)

    @property
    def secret(self) -> bool:
        """Leaderboard mode draws every workload's inputs from the secret seed."""
        return self.mode == Mode.LEADERBOARD

    def submission(self) -> dict[str, Any]:
        data = self.source.encode()
        return {"sha256": hashlib.sha256(data).hexdigest(), "form": self.form, "bytes": len(data)}

    def logs(self) -> dict[str, Any]:
        return {} if self.worker_stderr is None else {"worker_stderr": self.worker_stderr}


def tagged(findings: list[Finding], workload_id: str) -> list[Finding]:
    """`findings` as one workload's."""
    return [replace(f, workload=workload_id) for f in findings]
