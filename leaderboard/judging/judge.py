"""The server's own checks of a posted result document: what the node cannot be trusted with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from farm.errors import FarmError
from farm.result import Verdict, reason
from farm.suite.model import Problem
from leaderboard.problems import farm_bridge

UNCHECKED = "UNCHECKED_WORKLOAD"  # a time the server could not check against the floor
SECRET_KEY = "secret"  # workload entries run on secret seeds carry "secret": true
SHAPE_KEY = "shape"  # optional: the suite workload id a (secret) entry was drawn from


@dataclass
class Judgement:
    verdict: str
    suite_ok: bool
    reasons: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    held: str = ""  # why the run is held for an operator; "" when nothing stands in the way


def judge(
    *, document: dict[str, Any], suite: str, suite_hash: str, problem: str, hardware: str
) -> Judgement:
    """Check the suite hash and the roofline floor; build the per-workload rows.

    Every PASSED time is checked against the floor computed here. A workload the server cannot
    resolve in its copy of the suite (or whose floor it cannot compute on `hardware`) is not
    waved through: its reason is UNCHECKED_WORKLOAD and the judgement is `held` (unless the
    run fails or is rejected anyway)."""
    verdict = document["verdict"]
    reasons = []
    suite_ok = document["suite"]["name"] == suite and document["suite"]["hash"] == suite_hash
    if not suite_ok:
        reasons.append(
            reason(
                "SUITE_HASH_MISMATCH",
                f"evaluated with suite {document['suite']['name']}@{document['suite']['hash']}, "
                f"pinned is {suite}@{suite_hash}",
            )
        )
    try:
        farm_problem: Problem | None = farm_bridge.suite_load(suite).problem(problem)
        missing = ""
    except FarmError as exc:
        farm_problem, missing = None, f"problem {suite}/{problem} cannot be loaded here: {exc}"
    rows, unchecked = [], []
    for w in document["workloads"]:
        try:
            sol, floor = _server_bounds(farm_problem, w, hardware, missing)
        except farm_bridge.UNRESOLVABLE as exc:
            sol, floor = None, None
            if _timed_pass(w):
                unchecked.append(reason(UNCHECKED, f"workload {w['id']}: {exc}", workload=w["id"]))
        row = _row(w, sol)
        rows.append(row)
        t = row["time_ms"]
        if floor is not None and _timed_pass(w) and t < floor:
            sol_text = "unknown" if sol is None else f"{sol:.6g} ms"
            reasons.append(
                reason(
                    "ROOFLINE_FLOOR",
                    f"workload {w['id']}: {t:.6g} ms is below the physical floor {floor:.6g} ms "
                    f"on {hardware} (SOL {sol_text}); impossible times are rejected",
                    workload=w["id"],
                )
            )
            verdict = Verdict.REJECTED.value
    held = ""
    if unchecked and suite_ok and verdict != Verdict.REJECTED.value:
        reasons += unchecked
        held = (
            f"held for an operator: the server could not check {len(unchecked)} workload "
            f"time(s) against the roofline floor ({unchecked[0]['detail']}); sync the suite "
            "and re-run, or release the entry"
        )
    return Judgement(verdict=verdict, suite_ok=suite_ok, reasons=reasons, rows=rows, held=held)


def _timed_pass(w: dict[str, Any]) -> bool:
    return w["status"] == "PASSED" and _num(w.get("time_ms")) is not None


def _server_bounds(
    farm_problem: Problem | None, w: dict[str, Any], hardware: str, missing: str
) -> tuple[float | None, float]:
    """(SOL ms or None, floor ms) computed here for the workload's shape; raises one of
    farm_bridge.UNRESOLVABLE when the shape or its floor cannot be resolved (`missing`: why the
    problem could not)."""
    if farm_problem is None:
        raise FarmError(missing)
    workload = farm_problem.workload(w.get(SHAPE_KEY) or w["id"])
    bound = farm_bridge.sol_ms(farm_problem, workload, hardware)
    floor = farm_bridge.floor_ms(farm_problem, workload, hardware)
    return (bound["time_ms"] if bound else None), floor


def _row(w: dict[str, Any], server_sol: float | None) -> dict[str, Any]:
    low, high = interval(w)
    baseline = w.get("baseline_ms") or {}
    return {
        "workload_id": w["id"],
        "secret": bool(w.get(SECRET_KEY, False)),
        "status": w["status"],
        "time_ms": _num(w.get("time_ms")),
        "ci_low_ms": low,
        "ci_high_ms": high,
        "sol_ms": server_sol if server_sol is not None else _num(w.get("sol_ms")),
        "sol_score": _num(w.get("sol_score")),
        "baseline_eager_ms": _num(baseline.get("eager")),
        "baseline_compile_ms": _num(baseline.get("compile")),
    }


def interval(w: dict[str, Any]) -> tuple[float | None, float | None]:
    """The confidence interval of a workload's time (ms): `timing` (the harness) or `stats`
    holding `ci95_low_ms`/`ci95_high_ms` (farm.scoring.TimingStats.to_dict), or `time_ci_ms`
    [low, high]; (None, None) when the node sent none."""
    for key in ("timing", "stats"):
        stats = w.get(key)
        if isinstance(stats, dict) and "ci95_low_ms" in stats:
            return _num(stats.get("ci95_low_ms")), _num(stats.get("ci95_high_ms"))
    ci = w.get("time_ci_ms")
    if isinstance(ci, list | tuple) and len(ci) == 2:
        return _num(ci[0]), _num(ci[1])
    return None, None


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
