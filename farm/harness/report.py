"""Building the result document: workload entries, timing statistics, scores and the verdict."""

from __future__ import annotations

import hashlib
import platform
import time
from typing import Any

from farm import __version__, scoring
from farm.guard.static import scan_source
from farm.result import (
    SCHEMA,
    Mode,
    Reason,
    TimingSummary,
    Verdict,
    WorkloadEntry,
    WorkloadStatus,
    reason,
    worst,
)
from farm.suite.loader import Suite
from farm.suite.model import Problem, Workload

_STATUS_OF_CODE = {
    "RUNTIME_ERROR": WorkloadStatus.RUNTIME_ERROR,
    "TIMEOUT": WorkloadStatus.TIMEOUT,
    "HARNESS_ERROR": WorkloadStatus.RUNTIME_ERROR,
    "COMPILE_ERROR": WorkloadStatus.RUNTIME_ERROR,
    "REJECTED": WorkloadStatus.REJECTED,
}
SIDE_STREAM_RATIO = 1.5  # span / event time above this: work ran off the timed stream


def new_document(
    suite: Suite, problem: Problem, mode: Mode, target: Any, source: str, opts: Any
) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "suite": {"name": suite.name, "hash": suite.hash},
        "problem": problem.name,
        "hardware": target.hardware,
        "device": target.device,
        "mode": mode.value,
        "verdict": Verdict.PASSED.value,
        "reasons": [],
        "score": {"sol_score": None},
        "workloads": [],
        "submission": {
            "sha256": hashlib.sha256(source.encode()).hexdigest(),
            "form": None,
            "bytes": len(source.encode()),
        },
        "environment": {
            "farm": __version__,
            "python": platform.python_version(),
            "host": platform.node(),
        },
        "guard": {"findings": []},
        "seeds": {"secret": mode == Mode.LEADERBOARD},
        "logs": {},
        "reasons_extra": [],
        "verdict_override": None,
    }


def static_findings(source: str, filename: str) -> list[dict[str, Any]]:
    """The static guard's findings as dicts (the guard is part of the core: always on)."""
    return [_finding_dict(f) for f in scan_source(source, filename=filename)]


def _finding_dict(f: Any) -> dict[str, Any]:
    if hasattr(f, "to_dict"):
        return f.to_dict()
    return {"code": f.code, "severity": f.severity, "detail": f.detail, "line": f.line}


def workload_entry(
    problem: Problem, w: Workload, status: WorkloadStatus, errors: list[dict[str, Any]]
) -> dict[str, Any]:
    """A workload's entry before it is timed (farm.result.WorkloadEntry as JSON)."""
    entry = WorkloadEntry(
        id=w.id,
        status=status,
        time_ms=None,
        sol_ms=None,
        sol_score=None,
        baseline_ms={"eager": None, "compile": None},
        errors=[Reason.from_json(e, f"{w.id}.errors[{i}]") for i, e in enumerate(errors)],
        speedup={"eager": None, "compile": None},
        extra={
            "model": w.model,
            "axes": w.axes,
            "dtype": w.dtype,
            "sol": None,
            "flops": problem.flop_count(w),
            "bytes": problem.compulsory_bytes(w),
        },
    )
    return entry.to_json()


def status_of(errors: list[dict[str, Any]]) -> WorkloadStatus:
    """The workload status an error list implies (an explicit `status` on the first wins)."""
    if not errors:
        return WorkloadStatus.PASSED
    if errors[0].get("status"):
        return WorkloadStatus(_STATUS_OF_CODE.get(errors[0]["status"], errors[0]["status"]))
    return _STATUS_OF_CODE.get(errors[0]["code"], WorkloadStatus.INCORRECT)


def set_status(entry: dict[str, Any], errors: list[dict[str, Any]]) -> None:
    entry["errors"] += errors
    entry["status"] = status_of(errors).value


def add_timing(
    entry: dict[str, Any],
    reply: dict[str, Any],
    wall_ms: float,
    *,
    thermal: dict[str, Any],
    warmup_ms: float,
) -> None:
    """Candidate timing: statistics of the per-call times, the scored time (farm.scoring
    .scored_time: the trimmed mean, bound to the mean of every timed call), the
    windows as the supervisor timed them, and cross-checks. `reply` is a timing's summary
    (farm.harness.windows.TimedRun.summary); `wall_ms` the trusted side's own wall time of the
    whole timing (warm-up included, re-checks not)."""
    stats = scoring.TimingStats.from_samples(reply["times_ms"])
    scored, statistic = scoring.scored_time(stats)
    details = {
        "statistic": statistic,
        "windows_ms": reply["windows_ms"],
        "windows": reply["windows"],
        "rechecked": reply["rechecked"],
        "picks_ms": reply.get("picks_ms", []),
        "warmup_calls": reply["warmup_calls"],
        "warmup_ms": warmup_ms,
        "warmup_wall_ms": reply["warmup_wall_ms"],
        "wall_ms_outside": wall_ms,
        "thermal": thermal,
    }
    if reply["event_ms"]:
        details["event_median_ms"] = scoring.TimingStats.from_samples(reply["event_ms"]).median_ms
    timing = TimingSummary.from_json({**stats.to_dict(), "method": reply["method"], **details})
    entry["time_ms"], entry["timing"] = scored, timing.to_json()
    if reply["sim"]:
        entry["simulation"] = reply["sim"]


def add_baseline(
    entry: dict[str, Any],
    kind: str,
    reply: dict[str, Any],
    wall_ms: float,
    *,
    thermal: dict[str, Any],
    warmup_ms: float,
) -> None:
    """A baseline's timing, from a timing's summary, scored like the candidate (see add_timing)."""
    stats = scoring.TimingStats.from_samples(reply["times_ms"])
    scored, statistic = scoring.scored_time(stats)
    details = {
        "statistic": statistic,
        "windows": reply.get("windows", []),
        "warmup_calls": reply["warmup_calls"],
        "warmup_ms": warmup_ms,
        "wall_ms_outside": wall_ms,
        "sum_ms": sum(reply["times_ms"]),
        "thermal": thermal,
    }
    timing = TimingSummary.from_json({**stats.to_dict(), "method": reply["method"], **details})
    entry["baseline_ms"][kind], entry["baseline_timing"][kind] = scored, timing.to_json()


def finish(
    doc: dict[str, Any],
    problem: Problem,
    target: Any,
    entries: list[dict[str, Any]],
    started: float,
) -> None:
    """Score every timed workload, apply the plausibility checks and settle the verdict."""
    for entry in entries:
        if entry["status"] == WorkloadStatus.PASSED.value and entry["time_ms"] is not None:
            _score(entry, problem, target, doc)
            simulated = target.kind.simulated
            found = wall_clock_findings(entry, simulated=simulated)
            found += check_wall_findings(entry, simulated=simulated)
            doc["guard"]["findings"] += host_busy(entry, found)
    for entry in entries:
        # leaderboard mode draws every workload's inputs from the secret seed; the server counts
        # a run on a board only when its entries say so
        entry["secret"] = bool(doc["seeds"]["secret"])
    order = {w.id: i for i, w in enumerate(problem.workloads)}
    doc["workloads"] = sorted(entries, key=lambda e: order.get(e["id"], 0))
    _verdict(doc)
    doc["score"] = _aggregate(doc)
    doc["reasons"][:0] = doc.pop("reasons_extra")  # evaluation-wide causes first
    doc.pop("verdict_override")
    doc["timing"] = {"started_at": started, "duration_s": round(time.time() - started, 3)}


def _score(entry: dict[str, Any], problem: Problem, target: Any, doc: dict[str, Any]) -> None:
    from farm import sol

    w = problem.workload(entry["id"])
    t_k = entry["time_ms"]
    eager = entry["baseline_ms"]["eager"]
    for kind, base in entry["baseline_ms"].items():
        entry["speedup"][kind] = scoring.speedup(base, t_k) if base and t_k > 0 else None
    _check_streams(entry, doc, gpu=target.kind.gpu)
    if target.spec is None:
        return
    try:
        bound = sol.sol_bound(problem, w, target.spec)
    except sol.UnsupportedWorkload as exc:
        entry["errors"].append(reason("NO_SOL_BOUND", str(exc)))
        return
    floor = sol.floor_ms(problem, w, target.spec)
    entry["sol_ms"], entry["sol"], entry["floor_ms"] = bound.time_ms, bound.to_dict(), floor
    if scoring.below_floor(t_k, floor):
        set_status(
            entry,
            [
                reason(
                    "BELOW_SOL_FLOOR",
                    f"{t_k * 1e3:.3f} us is below the physical floor {floor * 1e3:.3f} us "
                    f"on {target.hardware}: the timing cannot be real",
                )
            ],
        )
        entry["status"] = WorkloadStatus.REJECTED.value
        return
    entry["fraction_of_sol"] = scoring.fraction_of_sol(t_k, bound.time_ms)
    if eager:
        entry["sol_score"] = scoring.sol_score(t_k, bound.time_ms, eager)


def window_yardstick(windows: list[dict[str, Any]]) -> tuple[float, float]:
    """A timing loop's cost from its windows as the supervisor recorded them (ms): per call
    beyond the reported times, and the most one window paid beyond its calls' share (its floor;
    farm.guard.plausibility)."""
    calls = sum(w["calls"] for w in windows)
    if not calls:
        return 0.0, 0.0
    unexplained = [w["wall_ms"] - w["sum_ms"] for w in windows]
    per_call = max(0.0, sum(unexplained) / calls)
    floor = max(u - per_call * w["calls"] for u, w in zip(unexplained, windows, strict=True))
    return per_call, max(0.0, floor)


def set_yardsticks(entry: dict[str, Any], check: Any, loop: Any | None) -> None:
    """Record the trusted yardsticks (farm.harness.reference.Yardstick) the wall-clock rules
    hold `entry` to: the check path's (`correctness.overhead_ms`, and `floor_ms`: its runs'
    spread plus a trusted request's floor, from the eager baseline's windows when there are
    some, else from `loop`), and the timing loop's (`timing.harness_overhead_ms` and
    `harness_floor_ms`) where no eager baseline gives one."""
    base = (entry.get("baseline_timing") or {}).get("eager") or {}
    if base.get("windows"):
        request_floor = window_yardstick(base["windows"])[1]
    else:
        request_floor = loop.floor_ms if loop is not None else 0.0
    entry["correctness"]["overhead_ms"] = check.per_call_ms
    entry["correctness"]["floor_ms"] = check.floor_ms + request_floor
    if loop is not None and not base.get("windows"):
        entry["timing"]["harness_overhead_ms"] = loop.per_call_ms
        entry["timing"]["harness_floor_ms"] = loop.floor_ms


def wall_rules_fire(entry: dict[str, Any]) -> bool:
    """Whether a wall-clock rule would reject `entry` as it stands (a wall-clock time)."""
    found = wall_clock_findings(entry, simulated=False) + check_wall_findings(
        entry, simulated=False
    )
    return any(f.get("severity") == "reject" for f in found)


def wall_clock_findings(entry: dict[str, Any], *, simulated: bool) -> list[dict[str, Any]]:
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

    cand, base = entry.get("timing") or {}, (entry.get("baseline_timing") or {}).get("eager")
    if simulated or not cand.get("windows"):
        return []
    if base and base.get("windows"):
        overhead, floor = window_yardstick(base["windows"])
        ratio = plausibility.WALL_OVERHEAD_RATIO
    elif cand.get("harness_overhead_ms") is not None:
        overhead, floor = cand["harness_overhead_ms"], cand.get("harness_floor_ms", 0.0)
        ratio = plausibility.NULL_OVERHEAD_RATIO
    else:
        return []
    found = plausibility.check_windows(
        [(w["calls"], w["wall_ms"], w["sum_ms"]) for w in cand["windows"]],
        overhead_ms_per_call=overhead,
        overhead_ratio=ratio,
        floor_ms=floor,
    )
    return [{**f.to_dict(), "workload": entry["id"]} for f in found]


def check_wall_findings(entry: dict[str, Any], *, simulated: bool) -> list[dict[str, Any]]:
    """The scored time must account for the calls the supervisor checked itself: the warmest
    check round's wall, less a trusted allowance for the check path (`set_yardsticks`), may not
    exceed a stated multiple of it (farm.guard.plausibility.check_check_walls). Every evaluation
    that reports a wall-clock time is held to it; simulated times (npu-sim, the supervisor's own
    knowledge) are exempt."""
    from farm.guard import plausibility

    checks = entry.get("correctness") or {}
    if simulated or entry.get("time_ms") is None or checks.get("overhead_ms") is None:
        return []
    found = plausibility.check_check_walls(
        walls_ms=list(checks.get("walls_ms") or []),
        reported_ms=entry["time_ms"],
        overhead_ms=checks["overhead_ms"],
        floor_ms=checks.get("floor_ms", 0.0),
    )
    return [{**f.to_dict(), "workload": entry["id"]} for f in found]


def host_busy(entry: dict[str, Any], found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`found` as it stands when the host was quiet; when the supervisor saw it busy after a
    wall-clock rule fired (`entry["host"]`, farm.harness.host_load), the rejecting findings
    become flags and the workload INCONCLUSIVE, with what was measured: a stretched wall on a
    contended host is not evidence against the kernel."""
    host = entry.get("host") or {}
    rejecting = [f for f in found if f.get("severity") == "reject"]
    if not host.get("busy") or not rejecting or entry["status"] != WorkloadStatus.PASSED.value:
        return found  # a verdict of another rule's (below the physical floor) stands
    detail = (
        f"the host was busy ({host.get('detail', '')}) when "
        + "; ".join(f"{f['code']}: {f['detail']}" for f in rejecting)
        + ". Nothing is said about the kernel: evaluate it again on a quiet node"
    )
    set_status(entry, [reason("HOST_BUSY", detail, status=WorkloadStatus.INCONCLUSIVE.value)])
    return [{**f, "severity": "flag"} if f in rejecting else f for f in found]


def _check_streams(entry: dict[str, Any], doc: dict[str, Any], *, gpu: bool) -> None:
    """On GPUs (the trusted side's knowledge, not the reply's method label), the all-stream span
    against the current stream's events."""
    timing = entry["timing"] or {}
    ev = timing.get("event_median_ms")
    if gpu and ev and entry["time_ms"] > SIDE_STREAM_RATIO * ev:
        doc["guard"]["findings"].append(
            {
                "code": "SIDE_STREAM_WORK",
                "severity": "flag",
                "workload": entry["id"],
                "line": None,
                "detail": "device work outside the timed stream: all-stream span "
                f"{entry['time_ms']:.4f} ms vs {ev:.4f} ms on the current stream "
                "(the span is what counts)",
            }
        )


def _verdict(doc: dict[str, Any]) -> None:
    verdicts = [_as_verdict(e["status"]) for e in doc["workloads"]]
    if doc.get("verdict_override"):
        verdicts.append(Verdict(doc["verdict_override"]))
    if any(f.get("severity") == "reject" for f in doc["guard"]["findings"]):
        verdicts.append(Verdict.REJECTED)
        doc["reasons"].append(
            reason(
                "GUARD_REJECT",
                "the guard found an attempt to game the evaluation: "
                + "; ".join(
                    f["code"] for f in doc["guard"]["findings"] if f.get("severity") == "reject"
                ),
            )
        )
    ran = [e for e in doc["workloads"] if e["status"] != WorkloadStatus.SKIPPED.value]
    if not ran and not doc.get("verdict_override"):
        verdicts.append(Verdict.RUNTIME_ERROR)
        doc["reasons"].append(reason("NO_WORKLOADS", "no workload could run on this device"))
    doc["verdict"] = worst(verdicts).value
    for e in doc["workloads"]:
        for err in e["errors"]:
            doc["reasons"].append({**err, "workload": e["id"]})


def _as_verdict(status: str) -> Verdict:
    if status in (WorkloadStatus.PASSED.value, WorkloadStatus.SKIPPED.value):
        return Verdict.PASSED
    return Verdict(status)


def _aggregate(doc: dict[str, Any]) -> dict[str, Any]:
    scored = [e for e in doc["workloads"] if e["status"] == WorkloadStatus.PASSED.value]
    sols = [e["sol_score"] for e in scored if e["sol_score"] is not None]
    out: dict[str, Any] = {
        "sol_score": None,
        "sol_score_mean": None,
        "fraction_of_sol": None,
        "speedup_eager": None,
        "speedup_compile": None,
        "workloads_scored": len(sols),
    }
    if doc["verdict"] != Verdict.PASSED.value or not scored:
        return out
    if sols and len(sols) == len(scored):
        out["sol_score"] = scoring.aggregate(sols)
        out["sol_score_mean"] = scoring.arithmetic_mean(sols)
    fracs = [e["fraction_of_sol"] for e in scored if e["fraction_of_sol"]]
    out["fraction_of_sol"] = _geomean(fracs) if len(fracs) == len(scored) else None
    for kind in ("eager", "compile"):
        sp = [e["speedup"][kind] for e in scored if e["speedup"][kind]]
        out[f"speedup_{kind}"] = _geomean(sp) if len(sp) == len(scored) else None
    return out


def _geomean(xs: list[float]) -> float:
    import math

    return math.exp(sum(math.log(x) for x in xs) / len(xs))
