"""The result document (`"schema": "farm.result/1"`): the one thing an evaluation produces.

Keys that scripts rely on (DESIGN.md): top level `schema`, `suite` {`name`, `hash`}, `problem`,
`hardware`, `mode`, `verdict`, `reasons` [{`code`, `detail`}], `score` {`sol_score`, ...},
`workloads` [{`id`, `status`, `time_ms`, `sol_ms`, `baseline_ms` {`eager`, `compile`},
`sol_score`, ...}].

The document is typed: `Result` (with `Reason`, `WorkloadEntry`, `TimingSummary` and its one
`Interval` shape, `Finding`, `Environment`) has `to_json` and a validating `from_json` that names
the bad field. Keys a type does not model are kept in its `extra` and written back, so a
document survives a round trip. `from_json` also reads the older shapes of a workload's interval
(`stats` {`ci95_low_ms`, `ci95_high_ms`} and `time_ci_ms` [low, high]) as `timing`. The JSON
Schema is `farm/result.schema.json` (tests hold it to these types); `validate()` checks a
document with `Result.from_json`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from farm.wire import Fields, WireError

SCHEMA = "farm.result/1"
SCHEMA_FILE = Path(__file__).with_name("result.schema.json")


class Verdict(StrEnum):
    """The document's verdict: the worst of its workloads' statuses, and COMPILE_ERROR when the
    submission's code could not be built, wherever the build failed (the import, a
    cpp_extension build, a worker that died importing it, a Triton kernel at its first launch,
    torch.compile at its first call); its workloads then carry status RUNTIME_ERROR or NOT_RUN
    reasons under a COMPILE_ERROR reason."""

    PASSED = "PASSED"
    INCORRECT = "INCORRECT"
    COMPILE_ERROR = "COMPILE_ERROR"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    TIMEOUT = "TIMEOUT"
    REJECTED = "REJECTED"
    # The farm's outcomes: nothing is said about the kernel (never a board entry, never a
    # negative reward; docs/outcomes.md says how a client should treat each)
    UNSUPPORTED = "UNSUPPORTED"  # the device cannot run what the kernel uses (a simulator's gap)
    INCONCLUSIVE = "INCONCLUSIVE"  # the host disturbed the measurement; measure again
    NODE_FAULT = "NODE_FAULT"  # the node could not evaluate (toolchain, disk, lost contact)

    @property
    def blames_submission(self) -> bool:
        """Whether this verdict is about the kernel (False: the farm's own outcome)."""
        return self not in FARM_OUTCOMES


class WorkloadStatus(StrEnum):
    PASSED = "PASSED"
    INCORRECT = "INCORRECT"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    TIMEOUT = "TIMEOUT"
    REJECTED = "REJECTED"
    SKIPPED = "SKIPPED"  # not run here (too large for the simulator, hardware lacks fp8, ...)
    UNSUPPORTED = "UNSUPPORTED"  # the farm's outcomes, as Verdict's
    INCONCLUSIVE = "INCONCLUSIVE"
    NODE_FAULT = "NODE_FAULT"


class Mode(StrEnum):
    TEST = "test"  # correctness only
    BENCHMARK = "benchmark"  # correctness + timing + scores
    LEADERBOARD = "leaderboard"  # benchmark + secret-seed inputs; the only mode boards count
    PROFILE = "profile"  # benchmark + a profiler report as an artifact


FARM_OUTCOMES = frozenset({Verdict.UNSUPPORTED, Verdict.INCONCLUSIVE, Verdict.NODE_FAULT})

# When several workloads fail differently, the verdict is the worst by this order: any verdict
# about the kernel outranks the farm's own outcomes (a kernel that is wrong on one workload is
# wrong, whatever the host did to another).
_SEVERITY = [
    Verdict.PASSED,
    Verdict.INCONCLUSIVE,
    Verdict.UNSUPPORTED,
    Verdict.NODE_FAULT,
    Verdict.INCORRECT,
    Verdict.TIMEOUT,
    Verdict.RUNTIME_ERROR,
    Verdict.COMPILE_ERROR,
    Verdict.REJECTED,
]


def worst(verdicts: list[Verdict]) -> Verdict:
    """The most severe verdict of a list (PASSED for an empty list)."""
    return max(verdicts, key=_SEVERITY.index, default=Verdict.PASSED)


def reason(code: str, detail: str, **extra: Any) -> dict[str, Any]:
    """A machine-readable reason: an UPPER_SNAKE `code` and a human `detail`."""
    return {"code": code, "detail": detail, **extra}


def reasons_grouped(
    reasons: list[tuple[str, str, str | None]],
) -> list[tuple[str, str, list[str]]]:
    """(code, detail, workload) triples with the same code and detail merged, in first-seen
    order, each with the workloads it came from: a traceback every workload raised is shown
    once, followed by the list of workloads, instead of once per workload."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for code, detail, workload in reasons:
        where = grouped.setdefault((code, detail), [])
        if workload and workload not in where:
            where.append(workload)
    return [(code, detail, where) for (code, detail), where in grouped.items()]


def reason_line(code: str, detail: str, workloads: list[str]) -> str:
    """One grouped reason as printed: `CODE [w1, w2]: detail`, whole (the terminal wraps it)."""
    where = f" [{', '.join(workloads)}]" if workloads else ""
    return f"  {code}{where}: {detail.rstrip()}"


# Exit codes of the commands that report verdicts (`farm eval`, `farm submit --wait`); 2 is
# wrong arguments or an unusable file, 4 a wait that gave up (docs/client.md, docs/outcomes.md)
EXIT_FARM = 1  # no verdict about the kernel: a farm outcome, a failed or cancelled run
EXIT_NOT_PASSED = 5  # INCORRECT, COMPILE_ERROR, RUNTIME_ERROR, TIMEOUT
EXIT_REJECTED = 6


def exit_code(verdicts: Iterable[str | None]) -> int:
    """The exit code for these verdicts (None: no verdict, e.g. a failed run), a verdict about
    the kernel first: EXIT_REJECTED when one was REJECTED, EXIT_NOT_PASSED when another did not
    pass, EXIT_FARM when the farm could not give one (UNSUPPORTED, INCONCLUSIVE, NODE_FAULT or
    None), 0 when every one PASSED."""
    known = {v.value for v in Verdict}
    given = [v if v in known else None for v in verdicts]
    about_kernel = {v for v in given if v is not None and Verdict(v).blames_submission}
    if Verdict.REJECTED.value in about_kernel:
        return EXIT_REJECTED
    if about_kernel - {Verdict.PASSED.value}:
        return EXIT_NOT_PASSED
    farm = not given or any(v is None or v not in about_kernel for v in given)
    return EXIT_FARM if farm else 0


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=False, allow_nan=False) + "\n"


class ResultSchemaError(WireError):
    """A document is not a valid farm.result/1 document; the message names the field."""


def _fields(data: Any, where: str) -> Fields:
    return Fields(data, where, ResultSchemaError)


def _nums(f: Fields, key: str) -> dict[str, float | None]:
    """An object of numbers or nulls (baseline_ms, speedup), keyed by baseline name."""
    inner = f.object(key, required=False)
    if inner is None:
        return {}
    return {k: inner.number(k) for k in list(inner.data)}


@dataclass(frozen=True)
class Reason:
    """Why a verdict or status was given: an UPPER_SNAKE `code` and a human `detail`;
    `workload` when it is one workload's."""

    code: str
    detail: str
    workload: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any, where: str = "reason") -> Reason:
        f = _fields(data, where)
        code, detail = f.text("code"), f.text("detail")
        return cls(code, detail, f.text("workload", required=False), f.rest())

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "detail": self.detail}
        if self.workload is not None:
            out["workload"] = self.workload
        return {**out, **self.extra}


@dataclass(frozen=True)
class Finding:
    """A guard finding as the document carries it: `severity` "reject" or "flag", `line` the
    1-based source line (None when not from source), `workload` when it is one workload's."""

    code: str
    severity: str | None = None
    detail: str = ""
    line: int | None = None
    workload: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any, where: str = "finding") -> Finding:
        f = _fields(data, where)
        return cls(
            code=f.text("code"),
            severity=f.text("severity", required=False),
            detail=f.text("detail", required=False) or "",
            line=f.integer("line", required=False),
            workload=f.text("workload", required=False),
            extra=f.rest(),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code}
        if self.severity is not None:
            out["severity"] = self.severity
        out["detail"], out["line"] = self.detail, self.line
        if self.workload is not None:
            out["workload"] = self.workload
        return {**out, **self.extra}


@dataclass(frozen=True)
class Interval:
    """The 95 % confidence interval of a median time, in ms."""

    low_ms: float
    high_ms: float

    def overlaps(self, other: Interval) -> bool:
        return self.low_ms <= other.high_ms and other.low_ms <= self.high_ms


_STATS = ("median_ms", "trimmed_mean_ms", "mean_ms", "std_ms", "min_ms", "max_ms")
_SINCE = ("trimmed_mean_ms",)  # statistics older documents lack: written only when set


@dataclass(frozen=True)
class TimingSummary:
    """Statistics of one call's repeated timings, in ms (farm.scoring.TimingStats), with `ci`
    the interval of the scored statistic (`ci_of`: the trimmed mean; "median" in documents
    from before it was scored); the harness's other details (method, windows_ms, warm-up,
    wall times, thermal readings) are in `details`. Only what a document carries is set."""

    median_ms: float | None = None
    trimmed_mean_ms: float | None = None
    mean_ms: float | None = None
    std_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    count: int | None = None
    ci: Interval | None = None
    rse: float | None = None  # relative standard error of the mean; None when infinite
    method: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any, where: str = "timing") -> TimingSummary:
        f = _fields(data, where)
        stats = {k: f.number(k, required=False) for k in _STATS}
        low, high = (
            f.number("ci95_low_ms", required=False),
            f.number("ci95_high_ms", required=False),
        )
        if (low is None) != (high is None):
            missing = "ci95_high_ms" if high is None else "ci95_low_ms"
            raise ResultSchemaError(f"{where}.{missing}: is required with its other bound")
        return cls(
            **stats,
            count=f.integer("count", required=False),
            ci=Interval(low, high) if low is not None and high is not None else None,
            rse=f.number("rse", required=False),
            method=f.text("method", required=False),
            details=f.rest(),
        )

    def to_json(self) -> dict[str, Any]:
        full = self.count is not None  # a whole TimingStats summary keeps its nulls
        out: dict[str, Any] = {
            k: getattr(self, k)
            for k in _STATS
            if (full and k not in _SINCE) or getattr(self, k) is not None
        }
        if full:
            out["count"] = self.count
        if self.ci is not None:
            out["ci95_low_ms"], out["ci95_high_ms"] = self.ci.low_ms, self.ci.high_ms
        if full or self.rse is not None:
            out["rse"] = self.rse
        if self.method is not None:
            out["method"] = self.method
        return {**out, **self.details}


@dataclass(frozen=True)
class WorkloadEntry:
    """One workload of a result. Times in ms: `time_ms` the candidate's scored time (its calls'
    trimmed mean, farm.harness.report.scored_time), `sol_ms` the
    speed-of-light time, `baseline_ms` and `speedup` keyed by baseline ("eager", "compile");
    `secret` is true for an entry run on secret-seed inputs (leaderboard mode)."""

    id: str
    status: WorkloadStatus
    time_ms: float | None
    sol_ms: float | None
    sol_score: float | None
    baseline_ms: dict[str, float | None]
    timing: TimingSummary | None = None
    baseline_timing: dict[str, TimingSummary] = field(default_factory=dict)
    errors: list[Reason] = field(default_factory=list)
    secret: bool = False
    speedup: dict[str, float | None] = field(default_factory=dict)
    fraction_of_sol: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def interval(self) -> Interval | None:
        """The confidence interval of `time_ms`, when the node sent one."""
        return self.timing.ci if self.timing else None

    @property
    def timed_pass(self) -> bool:
        return self.status == WorkloadStatus.PASSED and self.time_ms is not None

    @classmethod
    def from_json(cls, data: Any, where: str = "workload") -> WorkloadEntry:
        f = _fields(data, where)
        wid, status = f.text("id"), f.text("status")
        if status not in WorkloadStatus.__members__:
            raise ResultSchemaError(f"{where}.status: {status!r} is unknown")
        return cls(
            id=wid,
            status=WorkloadStatus(status),
            time_ms=f.number("time_ms"),
            sol_ms=f.number("sol_ms"),
            sol_score=f.number("sol_score"),
            baseline_ms=_nums(f, "baseline_ms") if f.mapping("baseline_ms") is not None else {},
            timing=_timing(f, where),
            baseline_timing=_baseline_timing(f),
            errors=[Reason.from_json(e, w) for e, w in f.elements("errors", required=False)],
            secret=f.flag("secret"),
            speedup=_nums(f, "speedup"),
            fraction_of_sol=f.number("fraction_of_sol", required=False),
            extra=f.rest(),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "status": self.status.value,
            "errors": [e.to_json() for e in self.errors],
            "time_ms": self.time_ms,
            "timing": self.timing.to_json() if self.timing else None,
            "sol_ms": self.sol_ms,
            "baseline_ms": dict(self.baseline_ms),
            "baseline_timing": {k: t.to_json() for k, t in self.baseline_timing.items()},
            "sol_score": self.sol_score,
            "secret": self.secret,
        }
        if self.speedup:
            out["speedup"] = dict(self.speedup)
        out["fraction_of_sol"] = self.fraction_of_sol
        return {**out, **self.extra}


def _baseline_timing(f: Fields) -> dict[str, TimingSummary]:
    """Each baseline's timing summary, keyed by baseline ("eager", "compile")."""
    inner = f.object("baseline_timing", required=False)
    if inner is None:
        return {}
    return {k: TimingSummary.from_json(v, f"{inner.where}.{k}") for k, v in inner.data.items()}


def _timing(f: Fields, where: str) -> TimingSummary | None:
    """`timing`, with its interval taken from the older shapes when it has none: `stats`
    (a TimingStats object) or `time_ci_ms` ([low, high]). Those keys are read here and not
    written back: the document comes out in today's shape."""
    t = f.object("timing", required=False)
    timing = TimingSummary.from_json(t.data, t.where) if t is not None else None
    legacy = f.object("stats", required=False)
    if (timing is None or timing.ci is None) and legacy is not None:
        old = TimingSummary.from_json(legacy.data, legacy.where)
        timing = old if timing is None else replace(timing, ci=old.ci)
    pair = f.array("time_ci_ms", required=False)
    if (timing is None or timing.ci is None) and pair:
        if len(pair) != 2 or any(
            isinstance(x, bool) or not isinstance(x, int | float) for x in pair
        ):
            raise ResultSchemaError(f"{where}.time_ci_ms: must be [low_ms, high_ms]")
        ci = Interval(float(pair[0]), float(pair[1]))
        timing = TimingSummary(ci=ci) if timing is None else replace(timing, ci=ci)
    return timing


@dataclass(frozen=True)
class Environment:
    """Where the evaluation ran: farm and Python versions, host, sandbox, and the device's
    readings `before` and `after` (clocks, temperature, driver and library versions)."""

    farm: str | None = None
    python: str | None = None
    host: str | None = None
    device: str | None = None
    sandbox: str | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _TEXT = ("farm", "python", "host", "device", "sandbox")

    @classmethod
    def from_json(cls, data: Any, where: str = "environment") -> Environment:
        f = _fields(data, where)
        text = {k: f.text(k, required=False) for k in cls._TEXT}
        before, after = f.mapping("before", required=False), f.mapping("after", required=False)
        return cls(**text, before=before, after=after, extra=f.rest())

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in (*self._TEXT, "before", "after")}
        return {**{k: v for k, v in out.items() if v is not None}, **self.extra}


@dataclass(frozen=True)
class Result:
    """A whole farm.result/1 document. `score` holds `sol_score` (the aggregate) first; the
    guard's findings are `findings` (`guard.findings` in JSON)."""

    suite: str
    suite_hash: str | None
    problem: str
    hardware: str
    mode: Mode
    verdict: Verdict
    reasons: list[Reason]
    sol_score: float | None
    workloads: list[WorkloadEntry]
    environment: Environment
    findings: list[Finding] = field(default_factory=list)
    score: dict[str, Any] = field(default_factory=dict)  # the aggregate's other figures
    guard: dict[str, Any] = field(default_factory=dict)  # the guard's keys besides findings
    suite_extra: dict[str, Any] = field(default_factory=dict)  # the suite's besides name, hash
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.verdict == Verdict.PASSED

    @classmethod
    def from_json(cls, data: Any, where: str = "result") -> Result:
        """The document `data` as a Result; ResultSchemaError names the first bad field."""
        f = _fields(data, where)
        if f.text("schema") != SCHEMA:
            raise ResultSchemaError(f"{where}.schema: must be '{SCHEMA}', got {data['schema']!r}")
        suite, score, guard = f.object("suite"), f.object("score"), f.object("guard")
        assert suite is not None and score is not None and guard is not None
        return cls(
            suite=suite.text("name"),
            suite_hash=suite.text("hash", null=True),
            problem=f.text("problem"),
            hardware=f.text("hardware"),
            mode=_member(Mode, f.text("mode"), f"{where}.mode", "a mode"),
            verdict=_member(Verdict, f.text("verdict"), f"{where}.verdict", "a verdict"),
            reasons=[Reason.from_json(r, w) for r, w in f.elements("reasons")],
            sol_score=score.number("sol_score"),
            workloads=[WorkloadEntry.from_json(x, w) for x, w in f.elements("workloads")],
            environment=Environment.from_json(f.mapping("environment"), f"{where}.environment"),
            findings=[
                Finding.from_json(x, w) for x, w in guard.elements("findings", required=False)
            ],
            score=score.rest(),
            guard=guard.rest(),
            suite_extra=suite.rest(),
            extra=f.rest(),
        )

    def to_json(self) -> dict[str, Any]:
        guard: dict[str, Any] = {"findings": [x.to_json() for x in self.findings], **self.guard}
        out = {
            "schema": SCHEMA,
            "suite": {"name": self.suite, "hash": self.suite_hash, **self.suite_extra},
            "problem": self.problem,
            "hardware": self.hardware,
            "mode": self.mode.value,
            "verdict": self.verdict.value,
            "reasons": [r.to_json() for r in self.reasons],
            "score": {"sol_score": self.sol_score, **self.score},
            "workloads": [w.to_json() for w in self.workloads],
            "environment": self.environment.to_json(),
            "guard": guard,
        }
        return {**out, **self.extra}


def _member(kind: Any, value: str, where: str, what: str) -> Any:
    if value not in {m.value for m in kind}:
        raise ResultSchemaError(f"{where}: {value!r} is not {what}")
    return kind(value)


def validate(doc: Any) -> dict[str, Any]:
    """Check `doc` the way every consumer reads it (Result.from_json); return it unchanged or
    raise ResultSchemaError naming the bad field."""
    Result.from_json(doc)
    return doc
