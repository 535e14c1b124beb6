"""Typed views of what the server returns: submissions, runs and result documents.

`Result` is the result document (`farm.result/1`) as farm.result reads it, flattened for
scripts; `Reason` is farm.result.Reason. Every object keeps the raw JSON it was built from in
`raw`, so nothing the server sends is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from farm.result import FARM_OUTCOMES, SCHEMA, Interval, Reason, Verdict, WorkloadEntry
from farm.result import Result as ResultDocument

FINISHED_STATES = frozenset({"done", "failed"})
KERNEL_VERDICTS = frozenset(v.value for v in Verdict if v.blames_submission)
FARM_VERDICTS = frozenset(v.value for v in FARM_OUTCOMES)


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class WorkloadResult:
    """One workload of a result (farm.result.WorkloadEntry, flattened). Times in ms;
    `baseline_ms` and `speedup` keyed by baseline ("eager", "compile"); `interval` the 95 %
    confidence interval of `time_ms`; `secret` is true for the secret-seed copy (leaderboard
    mode)."""

    id: str
    status: str
    time_ms: float | None
    sol_ms: float | None
    sol_score: float | None
    baseline_ms: dict[str, float | None]
    speedup: dict[str, float | None]
    secret: bool
    errors: list[Reason]
    raw: dict[str, Any] = field(repr=False)
    interval: Interval | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorkloadResult:
        """Raises farm.result.ResultSchemaError naming a bad field."""
        return cls.from_entry(WorkloadEntry.from_json(data), data)

    @classmethod
    def from_entry(cls, entry: WorkloadEntry, raw: dict[str, Any]) -> WorkloadResult:
        return cls(
            id=entry.id,
            status=entry.status.value,
            time_ms=entry.time_ms,
            sol_ms=entry.sol_ms,
            sol_score=entry.sol_score,
            baseline_ms=dict(entry.baseline_ms),
            speedup=dict(entry.speedup),
            secret=entry.secret,
            errors=list(entry.errors),
            raw=raw,
            interval=entry.interval,
        )


@dataclass(frozen=True)
class Result:
    """A result document (`farm.result/1`): the keys scripts rely on, `document` (the whole
    typed farm.result.Result) and `raw`."""

    schema: str
    suite: str
    suite_hash: str | None
    problem: str
    hardware: str
    mode: str
    verdict: str
    reasons: list[Reason]
    sol_score: float | None
    score: dict[str, Any]
    workloads: list[WorkloadResult]
    environment: dict[str, Any]
    guard: dict[str, Any]
    raw: dict[str, Any] = field(repr=False)
    document: ResultDocument | None = field(default=None, repr=False)

    @classmethod
    def from_document(cls, doc: dict[str, Any]) -> Result:
        """Raises farm.result.ResultSchemaError naming a bad field."""
        typed = ResultDocument.from_json(doc)
        return cls(
            schema=SCHEMA,
            suite=typed.suite,
            suite_hash=typed.suite_hash,
            problem=typed.problem,
            hardware=typed.hardware,
            mode=typed.mode.value,
            verdict=typed.verdict.value,
            reasons=list(typed.reasons),
            sol_score=typed.sol_score,
            score={"sol_score": typed.sol_score, **typed.score},
            workloads=[
                WorkloadResult.from_entry(e, raw)
                for e, raw in zip(typed.workloads, doc["workloads"], strict=True)
            ],
            environment=typed.environment.to_json(),
            guard=dict(doc["guard"]),
            raw=doc,
            document=typed,
        )

    @property
    def passed(self) -> bool:
        return self.verdict == "PASSED"

    @property
    def is_about_kernel(self) -> bool:
        """The verdict is about the kernel (not UNSUPPORTED, INCONCLUSIVE or NODE_FAULT)."""
        return self.verdict in KERNEL_VERDICTS


@dataclass(frozen=True)
class Run:
    """One (submission, hardware) evaluation. `verdict` and `sol_score` are the server's
    (after its plausibility checks); `result` is the stored document once the run is done."""

    id: int
    submission: int | None
    problem: str | None
    hardware: str
    mode: str
    state: str
    attempt: int
    verdict: str | None
    sol_score: float | None
    failure_code: str | None
    failure_detail: str | None
    result: Result | None
    server_reasons: list[Reason]
    audit: str  # "" (none), pending, confirmed or held: a would-be first place is re-run first
    audit_detail: str
    raw: dict[str, Any] = field(repr=False)
    category: str = ""  # kernel | farm once finished (docs/outcomes.md); "" before
    # while queued (the run's own read, GET /api/runs/<id>/): 1 = the next of its class taken,
    # and why it may wait long (no online node serves its class now)
    queue_position: int | None = None
    queue_warning: str | None = None
    # which workloads the result ran, which of the problem's it did not, and why (the server's)
    sizes: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any], *, submission: int | None = None) -> Run:
        res = data.get("result") or None
        document = res.get("document") if isinstance(res, dict) else None
        queue = data.get("queue")
        queue = queue if isinstance(queue, dict) else {}
        return cls(
            id=int(data["id"]),
            submission=data.get("submission", submission),
            problem=data.get("problem"),
            hardware=str(data.get("hardware", "")),
            mode=str(data.get("mode", "")),
            state=str(data.get("state", "")),
            attempt=int(data.get("attempt") or 0),
            verdict=data.get("verdict"),
            sol_score=_float(data.get("sol_score")),
            failure_code=data.get("failure_code") or None,
            failure_detail=data.get("failure_detail") or None,
            result=Result.from_document(document) if isinstance(document, dict) else None,
            server_reasons=[Reason.from_json(r) for r in (res or {}).get("server_reasons") or []],
            audit=str(data.get("audit") or ""),
            audit_detail=str(data.get("audit_detail") or ""),
            raw=data,
            category=str(data.get("category") or ""),
            queue_position=queue.get("position"),
            queue_warning=queue.get("warning") or None,
            sizes=(res or {}).get("sizes") or None,
        )

    @property
    def finished(self) -> bool:
        """True once the run is done or failed for good (it will not change again)."""
        return self.state in FINISHED_STATES

    @property
    def is_about_kernel(self) -> bool:
        """The run ended with a verdict about the kernel (PASSED, INCORRECT, COMPILE_ERROR,
        RUNTIME_ERROR, TIMEOUT, REJECTED). False while it runs and for the farm's own outcomes
        (UNSUPPORTED, INCONCLUSIVE, NODE_FAULT, a failure to evaluate): those say nothing
        about the kernel. docs/outcomes.md."""
        if not self.finished or self.state != "done":
            return False
        if self.category:
            return self.category == "kernel"
        return (self.verdict or "") in KERNEL_VERDICTS  # a server older than `category`

    @property
    def reward_usable(self) -> bool:
        """The outcome may become a reward (positive or negative): it is about the kernel and
        not held by the audit (a held first place waits for an operator). A farm outcome is
        never a reward: neither zero nor a penalty; leave the sample out or measure again."""
        return self.is_about_kernel and self.audit != "held"

    @property
    def advice(self) -> str:
        """What a loop should do with this run: `use` (reward_usable), `wait` (not finished,
        or a first place held for an operator), `resubmit` (the farm could not measure it
        here: INCONCLUSIVE, NODE_FAULT or a failure to evaluate; the farm already retried,
        uncharged), `skip-hardware` (UNSUPPORTED: this device cannot run what the kernel
        uses; do not retry it here)."""
        if self.reward_usable:
            return "use"
        if not self.finished or self.audit == "held":
            return "wait"
        if self.verdict == Verdict.UNSUPPORTED.value:
            return "skip-hardware"
        return "resubmit"


@dataclass(frozen=True)
class Submission:
    """A submitted source and its runs (one per hardware class)."""

    id: int
    problem: str
    suite: str
    mode: str
    state: str
    runs: list[Run]
    raw: dict[str, Any] = field(repr=False)
    warnings: tuple[str, ...] = ()  # on creation: e.g. a hardware class no online node serves

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Submission:
        sid = int(data["id"])
        runs = [
            Run.from_json({"problem": data.get("problem"), **r}, submission=sid)
            for r in data.get("runs") or []
        ]
        return cls(
            id=sid,
            problem=str(data.get("problem", "")),
            suite=str(data.get("suite", "")),
            mode=str(data.get("mode", "")),
            state=str(data.get("state", "")),
            runs=runs,
            raw=data,
            warnings=tuple(str(w) for w in data.get("warnings") or ()),
        )

    @property
    def run_ids(self) -> list[int]:
        return [r.id for r in self.runs]


@dataclass(frozen=True)
class WorkloadFigures:
    """One workload of a board entry (ms; `sol_score` of this workload alone; `eager_ms` the
    eager baseline's time in the entry's run)."""

    time_ms: float | None
    sol_ms: float | None
    sol_score: float | None
    eager_ms: float | None

    @classmethod
    def from_json(cls, data: Any) -> WorkloadFigures:
        data = data if isinstance(data, dict) else {}
        return cls(
            time_ms=_float(data.get("time_ms")),
            sol_ms=_float(data.get("sol_ms")),
            sol_score=_float(data.get("sol_score")),
            eager_ms=_float(data.get("eager_ms")),
        )

    @property
    def fraction_of_sol(self) -> float | None:
        return self.sol_ms / self.time_ms if self.sol_ms and self.time_ms else None


@dataclass(frozen=True)
class CopyFlag:
    """The entry's source nearly repeats an earlier public entry's (`submission` by `user`);
    `likeness` is the share of normalised token shingles the two have in common (0-1)."""

    submission: int
    user: str
    likeness: float

    @classmethod
    def from_json(cls, data: Any) -> CopyFlag | None:
        if not isinstance(data, dict):
            return None
        return cls(
            submission=int(data.get("submission", 0)),
            user=str(data.get("user", "")),
            likeness=_float(data.get("likeness")) or 0.0,
        )


@dataclass(frozen=True)
class BoardEntry:
    """A ranked board entry (times in ms: geometric means over its public workloads, each of
    which is in `workloads`)."""

    rank: int
    tied: bool
    user: str
    submission: int
    run: int
    sol_score: float | None
    time_ms: float | None
    sol_ms: float | None
    fraction_of_sol: float | None
    speedup_eager: float | None
    raw: dict[str, Any] = field(repr=False)
    speedup_compile: float | None = None
    workloads: dict[str, WorkloadFigures] = field(default_factory=dict)
    copy_of: CopyFlag | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BoardEntry:
        workloads = data.get("workloads")
        return cls(
            rank=int(data.get("rank", 0)),
            tied=bool(data.get("tied", False)),
            user=str(data.get("user", "")),
            submission=int(data.get("submission", 0)),
            run=int(data.get("run", 0)),
            sol_score=_float(data.get("sol_score")),
            time_ms=_float(data.get("time_ms")),
            sol_ms=_float(data.get("sol_ms")),
            fraction_of_sol=_float(data.get("fraction_of_sol")),
            speedup_eager=_float(data.get("speedup_eager")),
            raw=data,
            speedup_compile=_float(data.get("speedup_compile")),
            workloads={
                str(k): WorkloadFigures.from_json(v)
                for k, v in (workloads.items() if isinstance(workloads, dict) else ())
            },
            copy_of=CopyFlag.from_json(data.get("copy_of")),
        )


@dataclass(frozen=True)
class Board:
    suite: str
    suite_hash: str | None
    problem: str
    hardware: str
    entries: list[BoardEntry]
    raw: dict[str, Any] = field(repr=False)
    deterministic: bool = False  # equal times tie exactly; the earlier submission ranks first

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Board:
        return cls(
            suite=str(data.get("suite", "")),
            suite_hash=data.get("suite_hash"),
            problem=str(data.get("problem", "")),
            hardware=str(data.get("hardware", "")),
            entries=[BoardEntry.from_json(e) for e in data.get("entries") or []],
            raw=data,
            deterministic=bool(data.get("deterministic", False)),
        )

    def workload_ids(self) -> list[str]:
        """The workloads any entry was scored on, in the order the entries list them."""
        return list(dict.fromkeys(w for e in self.entries for w in e.workloads))


@dataclass(frozen=True)
class SubmitRequest:
    """One submission of a batch: the file's text, unchanged, and where to run it."""

    source: str
    problem: str
    hardware: list[str]
    mode: str = "benchmark"
    suite: str | None = None
    filename: str | None = None
    label: str = ""
    private: bool = True
    language: str | None = None

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "source": self.source,
            "problem": self.problem,
            "hardware": list(self.hardware),
            "mode": self.mode,
            "label": self.label,
            "private": self.private,
        }
        for key in ("suite", "filename", "language"):
            value = getattr(self, key)
            if value:
                body[key] = value
        return body
