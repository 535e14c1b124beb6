"""The judge alone (no database): what it cannot check it holds, never waves through."""

from __future__ import annotations

from leaderboard.judging.judge import UNCHECKED, judge
from leaderboard.problems import farm_bridge
from tests.leaderboard.lbkit import GPU, SUITE


def document(workload: str, *, suite_hash: str) -> dict:
    return {
        "suite": {"name": SUITE, "hash": suite_hash},
        "verdict": "PASSED",
        "workloads": [{"id": workload, "status": "PASSED", "time_ms": 5.0}],
    }


def verdict_of(problem: str, workload: str, *, suite_hash: str | None = None):  # type: ignore[no-untyped-def]
    pinned = farm_bridge.suite_load(SUITE).hash
    return judge(
        document=document(workload, suite_hash=suite_hash or pinned),
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
