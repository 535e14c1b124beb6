"""The server's own checks of a posted result document: what the node cannot be trusted with."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from farm.result import Verdict, reason
from leaderboard.problems import farm_bridge

log = logging.getLogger(__name__)

SECRET_KEY = "secret"  # workload entries run on secret seeds carry "secret": true
SHAPE_KEY = "shape"  # optional: the suite workload id a (secret) entry was drawn from


@dataclass
class Judgement:
    verdict: str
    suite_ok: bool
    reasons: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)


def judge(
    *, document: dict[str, Any], suite: str, suite_hash: str, problem: str, hardware: str
) -> Judgement:
    """Check the suite hash and the roofline floor; build the per-workload rows."""
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
    farm_problem = _farm_problem(suite, problem)
    rows = []
    for w in document["workloads"]:
        sol, floor = _server_bounds(farm_problem, w, hardware)
        row = _row(w, sol)
        rows.append(row)
        t = row["time_ms"]
        if floor and t is not None and w["status"] == "PASSED" and t < floor:
            reasons.append(
                reason(
                    "ROOFLINE_FLOOR",
                    f"workload {w['id']}: {t:.6g} ms is below the physical floor {floor:.6g} ms "
                    f"on {hardware} (SOL {sol:.6g} ms); impossible times are rejected",
                    workload=w["id"],
                )
            )
            verdict = Verdict.REJECTED.value
    return Judgement(verdict=verdict, suite_ok=suite_ok, reasons=reasons, rows=rows)


def _farm_problem(suite: str, problem: str) -> Any:
    try:
        return farm_bridge.suite_load(suite).problem(problem)
    except Exception as exc:
        log.warning("cannot load %s/%s for the floor check: %s", suite, problem, exc)
        return None


def _server_bounds(farm_problem: Any, w: dict[str, Any], hardware: str) -> tuple[Any, Any]:
    """(SOL ms, floor ms) computed here for the workload's shape; (None, None) if unknown."""
    if farm_problem is None:
        return None, None
    shape = w.get(SHAPE_KEY) or w["id"]
    try:
        workload = farm_problem.workload(shape)
    except Exception:
        return None, None
    bound = farm_bridge.sol_ms(farm_problem, workload, hardware)
    if bound is None:
        return None, None
    return bound["time_ms"], farm_bridge.floor_ms(farm_problem, workload, hardware)


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
