"""The result's last step: every timed workload scored against its SOL bound, the plausibility
rules applied (farm.guard.plausibility), the verdict settled, and the judge's records
(farm.harness.record) turned into the typed farm.result.Result."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

from farm import scoring
from farm.guard.static import scan_source
from farm.harness import timing_stats
from farm.harness.record import Report, WorkloadRecord
from farm.harness.timing_stats import Measured, window_yardstick, windows_of
from farm.result import Finding, Reason, Result, Verdict, WorkloadEntry, WorkloadStatus, worst
from farm.suite.loader import Suite
from farm.suite.model import Problem

__all__ = ["finish", "host_busy", "set_status", "static_findings", "window_yardstick"]

_STATUS_OF_CODE = {
    "RUNTIME_ERROR": WorkloadStatus.RUNTIME_ERROR,
    "TIMEOUT": WorkloadStatus.TIMEOUT,
    "HARNESS_ERROR": WorkloadStatus.RUNTIME_ERROR,
    "COMPILE_ERROR": WorkloadStatus.RUNTIME_ERROR,
    "REJECTED": WorkloadStatus.REJECTED,
}
SIDE_STREAM_RATIO = 1.5  # span / event time above this: work ran off the timed stream


def static_findings(source: str, filename: str) -> list[Finding]:
    """The static guard's findings (the guard is part of the core: always on)."""
    return [
        Finding(code=f.code, severity=f.severity, detail=f.detail, line=f.line)
        for f in scan_source(source, filename=filename)
    ]


def status_of(errors: list[Reason]) -> WorkloadStatus:
    """The workload status an error list implies (an explicit `status` on the first wins)."""
    if not errors:
        return WorkloadStatus.PASSED
    claimed = errors[0].extra.get("status")
    if claimed:
        return WorkloadStatus(_STATUS_OF_CODE.get(claimed, claimed))
    return _STATUS_OF_CODE.get(errors[0].code, WorkloadStatus.INCORRECT)


def set_status(record: WorkloadRecord, errors: list[Reason]) -> None:
    record.errors += errors
    record.status = status_of(errors)


def add_timing(
    record: WorkloadRecord,
    measured: Measured,
    wall_ms: float,
    *,
    thermal: dict[str, Any],
    warmup_ms: float,
) -> None:
    """The candidate's timing (farm.harness.timing_stats.candidate) in its record."""
    record.time_ms, record.timing = timing_stats.candidate(
        measured, wall_ms, thermal=thermal, warmup_ms=warmup_ms
    )
    if measured.sim:
        record.simulation = measured.sim


def add_baseline(
    record: WorkloadRecord,
    kind: str,
    measured: Measured,
    wall_ms: float,
    *,
    thermal: dict[str, Any],
    warmup_ms: float,
) -> None:
    """A baseline's timing, scored like the candidate's, in the workload's record."""
    record.baseline_ms[kind], record.baseline_timing[kind] = timing_stats.baseline(
        measured, wall_ms, thermal=thermal, warmup_ms=warmup_ms
    )


def finish(
    report: Report,
    suite: Suite,
    problem: Problem,
    target: Any,
    records: list[WorkloadRecord],
    started: float,
) -> Result:
    """Score every timed workload, apply the plausibility checks and settle the verdict: the
    evaluation's result."""
    for record in records:
        if record.passed and record.time_ms is not None:
            _score(record, problem, target, report)
            simulated = target.kind.simulated
            found = wall_clock_findings(record, simulated=simulated)
            found += check_wall_findings(record, simulated=simulated)
            report.findings += host_busy(record, found)
    order = {w.id: i for i, w in enumerate(problem.workloads)}
    entries = [
        _entry(r, secret=report.secret) for r in sorted(records, key=lambda r: order.get(r.id, 0))
    ]
    verdict, reasons = _verdict(entries, report)
    score = _aggregate(verdict, entries)
    return Result(
        suite=suite.name,
        suite_hash=suite.hash,
        problem=problem.name,
        hardware=target.hardware,
        mode=report.mode,
        verdict=verdict,
        reasons=report.reasons + reasons,  # evaluation-wide causes first
        sol_score=score.pop("sol_score"),
        workloads=entries,
        environment=report.setting.to_environment(),
        findings=list(report.findings),
        score=score,
        extra={
            "device": target.device,
            "submission": report.submission(),
            "seeds": {"secret": report.secret, "fresh": report.fresh_seed},
            "logs": report.logs(),
            "timing": {
                "started_at": started,
                "duration_s": round(time.time() - started, 3),
                "phases_s": report.phases.seconds,
            },
        },
    )


def _entry(record: WorkloadRecord, *, secret: bool) -> WorkloadEntry:
    """A finished record as the result's entry; leaderboard mode draws every workload's inputs
    from the secret seed, and the server counts a run on a board only when its entries say so."""
    return WorkloadEntry(
        id=record.id,
        status=record.status,
        time_ms=record.time_ms,
        sol_ms=record.sol_ms,
        sol_score=record.sol_score,
        baseline_ms=dict(record.baseline_ms),
        timing=record.timing,
        baseline_timing=dict(record.baseline_timing),
        errors=list(record.errors),
        secret=secret,
        speedup=dict(record.speedup),
        fraction_of_sol=record.fraction_of_sol,
        extra=record.extra(),
    )


def _score(record: WorkloadRecord, problem: Problem, target: Any, report: Report) -> None:
    from farm import sol

    w = problem.workload(record.id)
    t_k = record.time_ms
    assert t_k is not None
    eager = record.baseline_ms["eager"]
    for kind, base in record.baseline_ms.items():
        record.speedup[kind] = scoring.speedup(base, t_k) if base and t_k > 0 else None
    report.findings += _side_streams(record, gpu=target.kind.gpu)
    if target.spec is None:
        return
    try:
        bound = sol.sol_bound(problem, w, target.spec)
    except sol.UnsupportedWorkload as exc:
        record.errors.append(Reason("NO_SOL_BOUND", str(exc)))
        return
    floor = sol.floor_ms(problem, w, target.spec)
    record.sol_ms, record.sol, record.floor_ms = bound.time_ms, bound.to_dict(), floor
    if scoring.below_floor(t_k, floor):
        detail = (
            f"{t_k * 1e3:.3f} us is below the physical floor {floor * 1e3:.3f} us "
            f"on {target.hardware}: the timing cannot be real"
        )
        set_status(record, [Reason("BELOW_SOL_FLOOR", detail)])
        record.status = WorkloadStatus.REJECTED
        return
    record.fraction_of_sol = scoring.fraction_of_sol(t_k, bound.time_ms)
    if eager:
        record.sol_score = scoring.sol_score(t_k, bound.time_ms, eager)


def set_yardsticks(record: WorkloadRecord, check: Any, loop: Any | None) -> None:
    """Record the trusted yardsticks (farm.harness.reference.Yardstick) the wall-clock rules
    hold `record` to: the check path's (`Checks.overhead_ms`, and `floor_ms`: its runs' spread
    plus a trusted request's floor, from the eager baseline's windows when there are some, else
    from `loop`), and the timing loop's (`timing.harness_overhead_ms` and `harness_floor_ms`)
    where no eager baseline gives one."""
    base = windows_of(record.baseline_timing.get("eager"))
    if base:
        request_floor = window_yardstick(base)[1]
    else:
        request_floor = loop.floor_ms if loop is not None else 0.0
    assert record.checks is not None  # a timed workload was checked first
    record.checks.overhead_ms = check.per_call_ms
    record.checks.floor_ms = check.floor_ms + request_floor
    if loop is not None and not base:
        record.add_timing_details(
            harness_overhead_ms=loop.per_call_ms, harness_floor_ms=loop.floor_ms
        )


def wall_rules_fire(record: WorkloadRecord) -> bool:
    """Whether a wall-clock rule would reject `record` as it stands (a wall-clock time)."""
    found = wall_clock_findings(record, simulated=False)
    found += check_wall_findings(record, simulated=False)
    return any(f.severity == "reject" for f in found)


def wall_clock_findings(record: WorkloadRecord, *, simulated: bool) -> list[Finding]:
    """The candidate's reported times must fit the wall time the supervisor measured around each
    window it asked for, given a trusted yardstick of what the same timing loop costs
    (farm.guard.plausibility.check_windows): the eager baseline timed the same way when there
    is one (per call and per window, `window_yardstick`), else the loop around a call that does
    nothing, measured by the supervisor itself (farm.harness.reference.loop_yardstick), with a
    wider margin. Every evaluation that reports a wall-clock time is checked, with or without
    baselines; only simulated times (npu-sim, the supervisor's own knowledge of its device) are
    exempt: nothing the worker labels its times decides it. Warm-up is its own request, outside
    every window."""
    from farm.guard import plausibility

    windows = windows_of(record.timing)
    if simulated or not windows:
        return []
    details = record.timing.details if record.timing else {}
    base = windows_of(record.baseline_timing.get("eager"))
    if base:
        overhead, floor = window_yardstick(base)
        ratio = plausibility.WALL_OVERHEAD_RATIO
    elif details.get("harness_overhead_ms") is not None:
        overhead, floor = details["harness_overhead_ms"], details.get("harness_floor_ms", 0.0)
        ratio = plausibility.NULL_OVERHEAD_RATIO
    else:
        return []
    found = plausibility.check_windows(
        [(w.calls, w.wall_ms, w.sum_ms) for w in windows],
        overhead_ms_per_call=overhead,
        overhead_ratio=ratio,
        floor_ms=floor,
    )
    return [_finding(f, record.id) for f in found]


def check_wall_findings(record: WorkloadRecord, *, simulated: bool) -> list[Finding]:
    """The scored time must account for the calls the supervisor checked itself: the warmest
    check round's wall, less a trusted allowance for the check path (`set_yardsticks`), may not
    exceed a stated multiple of it (farm.guard.plausibility.check_check_walls). Every evaluation
    that reports a wall-clock time is held to it; simulated times (npu-sim, the supervisor's own
    knowledge) are exempt."""
    from farm.guard import plausibility

    checks = record.checks
    if simulated or record.time_ms is None or checks is None or checks.overhead_ms is None:
        return []
    found = plausibility.check_check_walls(
        walls_ms=list(checks.walls_ms or []),
        reported_ms=record.time_ms,
        overhead_ms=checks.overhead_ms,
        floor_ms=checks.floor_ms if checks.floor_ms is not None else 0.0,
    )
    return [_finding(f, record.id) for f in found]


def _finding(f: Any, workload: str) -> Finding:
    """A farm.guard finding as one workload's result finding."""
    return Finding(
        code=f.code, severity=f.severity, detail=f.detail, line=f.line, workload=workload
    )


def host_busy(record: WorkloadRecord, found: list[Finding]) -> list[Finding]:
    """`found` as it stands when the host was quiet; when the supervisor saw it busy after a
    wall-clock rule fired (`record.host`, farm.harness.host_load), the rejecting findings
    become flags and the workload INCONCLUSIVE, with what was measured: a stretched wall on a
    contended host is not evidence against the kernel."""
    rejecting = [f for f in found if f.severity == "reject"]
    if record.host is None or not record.host.busy or not rejecting or not record.passed:
        return found  # a verdict of another rule's (below the physical floor) stands
    detail = (
        f"the host was busy ({record.host.describe()}) when "
        + "; ".join(f"{f.code}: {f.detail}" for f in rejecting)
        + ". Nothing is said about the kernel: evaluate it again on a quiet node"
    )
    status = {"status": WorkloadStatus.INCONCLUSIVE.value}
    set_status(record, [Reason("HOST_BUSY", detail, extra=status)])
    return [replace(f, severity="flag") if f in rejecting else f for f in found]


def _side_streams(record: WorkloadRecord, *, gpu: bool) -> list[Finding]:
    """On GPUs (the trusted side's knowledge, not the reply's method label), the all-stream span
    against the current stream's events."""
    ev = record.timing.details.get("event_median_ms") if record.timing else None
    t_k = record.time_ms or 0.0
    if not (gpu and ev and t_k > SIDE_STREAM_RATIO * ev):
        return []
    detail = (
        f"device work outside the timed stream: all-stream span {t_k:.4f} ms vs {ev:.4f} ms "
        "on the current stream (the span is what counts)"
    )
    return [Finding("SIDE_STREAM_WORK", "flag", detail, line=None, workload=record.id)]


def _verdict(entries: list[WorkloadEntry], report: Report) -> tuple[Verdict, list[Reason]]:
    """The verdict and the reasons it rests on, after the evaluation-wide ones."""
    verdicts = [_as_verdict(e.status) for e in entries]
    reasons: list[Reason] = []
    if report.compile_error:
        verdicts.append(Verdict.COMPILE_ERROR)
    rejecting = [f.code for f in report.findings if f.severity == "reject"]
    if rejecting:
        verdicts.append(Verdict.REJECTED)
        detail = "the guard found an attempt to game the evaluation: " + "; ".join(rejecting)
        reasons.append(Reason("GUARD_REJECT", detail))
    ran = [e for e in entries if e.status != WorkloadStatus.SKIPPED]
    if not ran and not report.compile_error:
        verdicts.append(Verdict.RUNTIME_ERROR)
        reasons.append(Reason("NO_WORKLOADS", "no workload could run on this device"))
    reasons += [replace(err, workload=e.id) for e in entries for err in e.errors]
    return worst(verdicts), reasons


def _as_verdict(status: WorkloadStatus) -> Verdict:
    if status in (WorkloadStatus.PASSED, WorkloadStatus.SKIPPED):
        return Verdict.PASSED
    return Verdict(status.value)


def _aggregate(verdict: Verdict, entries: list[WorkloadEntry]) -> dict[str, Any]:
    """The aggregate score's figures, `sol_score` first (farm.result.Result.score)."""
    scored = [e for e in entries if e.status == WorkloadStatus.PASSED]
    sols = [e.sol_score for e in scored if e.sol_score is not None]
    out: dict[str, Any] = {
        "sol_score": None,
        "sol_score_mean": None,
        "fraction_of_sol": None,
        "speedup_eager": None,
        "speedup_compile": None,
        "workloads_scored": len(sols),
    }
    if verdict != Verdict.PASSED or not scored:
        return out
    if sols and len(sols) == len(scored):
        out["sol_score"] = scoring.aggregate(sols)
        out["sol_score_mean"] = scoring.arithmetic_mean(sols)
    fracs = [e.fraction_of_sol for e in scored if e.fraction_of_sol]
    out["fraction_of_sol"] = _geomean(fracs) if len(fracs) == len(scored) else None
    for kind in ("eager", "compile"):
        sp = [x for e in scored if (x := e.speedup.get(kind))]
        out[f"speedup_{kind}"] = _geomean(sp) if len(sp) == len(scored) else None
    return out


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))
