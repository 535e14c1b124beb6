"""The judge alone (no database): what it cannot check it holds, never waves through."""

from __future__ import annotations

from dataclasses import replace

from farm.result import Environment, Mode, Result, Verdict, WorkloadEntry, WorkloadStatus
from leaderboard.judging.judge import UNCHECKED, judge
from leaderboard.problems import farm_bridge
from tests.leaderboard.lbkit import GPU, SUITE


def document(workload: str, *, suite_hash: str) -> Result:
    entry = WorkloadEntry(
        id=workload,
        status=WorkloadStatus.PASSED,
        time_ms=5.0,
        sol_ms=None,
        sol_score=None,
        baseline_ms={},
    )
    return Result(
        suite=SUITE,
        suite_hash=suite_hash,
        problem="vector_add",
        hardware=GPU,
        mode=Mode.BENCHMARK,
        verdict=Verdict.PASSED,
        reasons=[],
        sol_score=None,
        workloads=[entry],
        environment=Environment(),
    )


def verdict_of(problem: str, workload: str, *, suite_hash: str | None = None):  # type: ignore[no-untyped-def]
    pinned = farm_bridge.suite_load(SUITE).hash
    return judge(
        result=document(workload, suite_hash=suite_hash or pinned),
        suite=SUITE,
        suite_hash=pinned,
        problem=problem,
        hardware=GPU,
    )


def test_a_problem_the_server_cannot_load_holds_the_run():
    j = verdict_of("no-such-problem", "big")
    assert j.verdict == "PASSED" and j.held.startswith("held for an operator")
    assert [r["code"] for r in j.reasons] == [UNCHECKED]
    assert "no-such-problem" in j.reasons[0]["detail"]


def test_a_known_workload_is_checked_and_not_held():
    j = verdict_of("vector_add", "big")
    assert j.held == "" and j.reasons == [] and j.rows[0]["sol_ms"] is not None


def test_a_run_that_fails_anyway_is_not_held():
    j = verdict_of("vector_add", "not-in-the-suite", suite_hash="0" * 64)
    assert not j.suite_ok and j.held == ""
    assert [r["code"] for r in j.reasons] == ["SUITE_HASH_MISMATCH"]


def test_every_stored_interval_shape_gives_the_same_row():
    pinned = farm_bridge.suite_load(SUITE).hash
    base = {"id": "big", "status": "PASSED", "time_ms": 5.0, "sol_ms": None, "sol_score": None}
    shapes = [
        {"timing": {"ci95_low_ms": 4.0, "ci95_high_ms": 6.0}},
        {"stats": {"ci95_low_ms": 4.0, "ci95_high_ms": 6.0}},
        {"time_ci_ms": [4.0, 6.0]},
    ]
    rows = []
    for shape in shapes:
        entry = WorkloadEntry.from_json({**base, "baseline_ms": {}, **shape})
        result = replace(document("big", suite_hash=pinned), workloads=[entry])
        j = judge(result=result, suite=SUITE, suite_hash=pinned, problem="vector_add", hardware=GPU)
        rows.append((j.rows[0]["ci_low_ms"], j.rows[0]["ci_high_ms"]))
    assert rows == [(4.0, 6.0)] * 3


def test_the_floor_is_the_servers_own_workload_whatever_the_document_names():
    """A time under the big workload's floor stays REJECTED however the document dresses the
    entry: a `shape` naming the small workload is kept as an unknown key and sizes nothing."""
    pinned = farm_bridge.suite_load(SUITE).hash
    problem = farm_bridge.suite_load(SUITE).problem("vector_add")
    big = farm_bridge.floor_ms(problem, problem.workload("big"), GPU)
    small = farm_bridge.floor_ms(problem, problem.workload("small"), GPU)
    assert small < big
    claimed = (small + big) / 2
    base = {"id": "big", "status": "PASSED", "time_ms": claimed, "sol_ms": None, "sol_score": None}
    entry = WorkloadEntry.from_json({**base, "baseline_ms": {}, "shape": "small"})
    result = replace(document("big", suite_hash=pinned), workloads=[entry])
    j = judge(result=result, suite=SUITE, suite_hash=pinned, problem="vector_add", hardware=GPU)
    assert j.verdict == "REJECTED"
    assert [r["code"] for r in j.reasons] == ["ROOFLINE_FLOOR"]
