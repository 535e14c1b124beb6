"""What a result document says about sizes, read against the pinned suite on this machine: the
workloads it ran and those of its problem it did not, and why (Problem.size_statement). The
server states the same from its copy of the suite (leaderboard.problems.farm_bridge)."""

from __future__ import annotations

from farm.errors import FarmError
from farm.result import Result, WorkloadStatus
from farm.suite.loader import load_suite


def result_statement(result: Result) -> str | None:
    """`ran: small; not run: source (...)` for `result`; None when its suite is not here or is
    pinned differently (the statement would be about other workloads)."""
    try:
        suite = load_suite(result.suite)
        problem = suite.problem(result.problem)
    except FarmError:
        return None
    if result.suite_hash and suite.hash != result.suite_hash:
        return None
    ran = [w.id for w in result.workloads if w.status != WorkloadStatus.SKIPPED and not w.secret]
    return problem.size_statement(ran)
