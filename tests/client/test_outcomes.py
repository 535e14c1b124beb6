"""How a loop should read a run's outcome (docs/outcomes.md): only a verdict about the kernel is
a reward; the farm's own outcomes are neither a zero nor a penalty."""

from __future__ import annotations

import pytest

from farm.client.types import Run


def run(state: str, verdict: str = "", category: str = "", audit: str = "") -> Run:
    return Run.from_json(
        {
            "id": 1,
            "hardware": "npu-sim-v1",
            "mode": "benchmark",
            "state": state,
            "verdict": verdict,
            "category": category,
            "audit": audit,
        }
    )


@pytest.mark.parametrize(
    ("state", "verdict", "category", "audit", "about", "usable", "advice"),
    [
        ("done", "PASSED", "kernel", "", True, True, "use"),
        ("done", "REJECTED", "kernel", "", True, True, "use"),  # a penalty the kernel earned
        ("done", "INCORRECT", "", "", True, True, "use"),  # a server older than `category`
        ("done", "PASSED", "kernel", "held", True, False, "wait"),
        ("done", "INCONCLUSIVE", "farm", "", False, False, "resubmit"),
        ("done", "NODE_FAULT", "farm", "", False, False, "resubmit"),
        ("done", "UNSUPPORTED", "farm", "", False, False, "skip-hardware"),
        ("done", "UNSUPPORTED", "", "", False, False, "skip-hardware"),
        ("failed", "", "farm", "", False, False, "resubmit"),
        ("running", "", "", "", False, False, "wait"),
        ("queued", "", "", "", False, False, "wait"),
    ],
)
def test_each_outcome_says_whether_it_is_a_reward(
    state, verdict, category, audit, about, usable, advice
):
    r = run(state, verdict, category, audit)
    assert (r.is_about_kernel, r.reward_usable, r.advice) == (about, usable, advice)
