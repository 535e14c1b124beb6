"""The server's own checks of a posted result document: what the node cannot be trusted with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from farm.errors import FarmError
from farm.result import Result, Verdict, WorkloadEntry, WorkloadStatus, reason, worst
from farm.suite.model import Problem
from leaderboard.problems import farm_bridge

UNCHECKED = "UNCHECKED_WORKLOAD"  # a time the server could not check against the floor
MILDER = "VERDICT_MILDER_THAN_WORKLOADS"  # the verdict says less than its own document
NOT_A_VERDICT = (WorkloadStatus.PASSED, WorkloadStatus.SKIPPED)


@dataclass
class Judgement:
    verdict: str
    suite_ok: bool
    reasons: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    held: str = ""  # why the run is held for an operator; "" when nothing stands in the way


def judge(*, result: Result, suite: str, suite_hash: str, problem: str, hardware: str) -> Judgement:
    """Check the suite hash, the verdict against the document's own workloads and the roofline
    floor; build the per-workload rows.

    The verdict is never milder than the document's own workloads and guard findings: a farm
    outcome (INCONCLUSIVE, NODE_FAULT, UNSUPPORTED) beside a workload the kernel failed, or a
    PASSED beside a guard finding that rejects, is judged by the worst of them (MILDER), so no
    claim of the node turns a failure the kernel earned into the farm's outcome.

    Every PASSED time is checked against the floor computed here. A workload the server cannot
    resolve in its copy of the suite (or whose floor it cannot compute on `hardware`) is not
    waved through: its reason is UNCHECKED_WORKLOAD and the judgement is `held` (unless the
    run fails or is rejected anyway)."""
    verdict, reasons = _verdict_of_document(result)
    suite_ok = result.suite == suite and result.suite_hash == suite_hash
    if not suite_ok:
        reasons.append(
            reason(
                "SUITE_HASH_MISMATCH",
                f"evaluated with suite {result.suite}@{result.suite_hash}, "
                f"pinned is {suite}@{suite_hash}",
            )
        )
    try:
        farm_problem: Problem | None = farm_bridge.suite_load(suite).problem(problem)
        missing = ""
    except FarmError as exc:
        farm_problem, missing = None, f"problem {suite}/{problem} cannot be loaded here: {exc}"
    rows, unchecked = [], []
    for w in result.workloads:
        try:
            sol, floor = _server_bounds(farm_problem, w, hardware, missing)
        except farm_bridge.UNRESOLVABLE as exc:
            sol, floor = None, None
            if w.timed_pass:
                unchecked.append(reason(UNCHECKED, f"workload {w.id}: {exc}", workload=w.id))
        rows.append(_row(w, sol))
        if floor is not None and w.timed_pass and w.time_ms is not None and w.time_ms < floor:
            sol_text = "unknown" if sol is None else f"{sol:.6g} ms"
            reasons.append(
                reason(
                    "ROOFLINE_FLOOR",
                    f"workload {w.id}: {w.time_ms:.6g} ms is below the physical floor "
                    f"{floor:.6g} ms on {hardware} (SOL {sol_text}); impossible times are "
                    "rejected",
                    workload=w.id,
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


def _verdict_of_document(result: Result) -> tuple[str, list[dict[str, Any]]]:
    """The document's verdict, or the worst of its workloads' statuses and guard rejections
    when that is worse (with a MILDER reason)."""
    own = [Verdict(w.status.value) for w in result.workloads if w.status not in NOT_A_VERDICT]
    if any(f.severity == "reject" for f in result.findings):
        own.append(Verdict.REJECTED)
    verdict = worst([result.verdict, *own])
    if verdict == result.verdict:
        return verdict.value, []
    detail = (
        f"the document says {result.verdict.value}, but its own workloads and guard findings "
        f"say {verdict.value}: judged {verdict.value}"
    )
    return verdict.value, [reason(MILDER, detail)]


def _server_bounds(
    farm_problem: Problem | None, w: WorkloadEntry, hardware: str, missing: str
) -> tuple[float | None, float]:
    """(SOL ms or None, floor ms) computed here for the server's own copy of workload `w.id`
    (nothing in the document sizes it); raises one of farm_bridge.UNRESOLVABLE when the workload
    or its floor cannot be resolved (`missing`: why the problem could not)."""
    if farm_problem is None:
        raise FarmError(missing)
    workload = farm_problem.workload(w.id)
    bound = farm_bridge.sol_on(farm_problem, workload, hardware)
    floor = farm_bridge.floor_ms(farm_problem, workload, hardware)
    return (bound.time_ms if bound else None), floor


def _row(w: WorkloadEntry, server_sol: float | None) -> dict[str, Any]:
    """The fields of the workload's WorkloadResult row (leaderboard.runs.models)."""
    ci = w.interval
    return {
        "workload_id": w.id,
        "secret": w.secret,
        "status": w.status.value,
        "time_ms": w.time_ms,
        "ci_low_ms": ci.low_ms if ci else None,
        "ci_high_ms": ci.high_ms if ci else None,
        "sol_ms": server_sol if server_sol is not None else w.sol_ms,
        "sol_score": w.sol_score,
        "baseline_eager_ms": w.baseline_ms.get("eager"),
        "baseline_compile_ms": w.baseline_ms.get("compile"),
    }
