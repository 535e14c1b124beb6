"""Every honest kernel PASSES and every flawed one gets the verdict its header names.

Correctness mode on the CPU device (Triton under the interpreter) for the whole catalogue;
benchmark mode on the simulated NPU for every Triton kernel (issue: at least 10 must pass there,
with a SOL score, never below the SOL bound).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from farm.result import validate
from tests.harness.conftest import evaluated, header, solution_files

CORRECT = solution_files("correct")
WRONG = solution_files("wrong")
TRITON = [p for p in CORRECT if "triton" in p.stem]


def _summary(doc: dict) -> str:
    return f"{doc['verdict']}: " + "; ".join(r["detail"][:300] for r in doc["reasons"][:3])


@pytest.mark.slow
@pytest.mark.parametrize("path", CORRECT, ids=lambda p: p.stem)
def test_correct_solution_passes(path: Path, sandbox_ready: None) -> None:
    doc = evaluated(str(path), "cpu", "test")
    validate(doc)
    assert doc["verdict"] == "PASSED", _summary(doc)
    assert all(w["status"] in ("PASSED", "SKIPPED") for w in doc["workloads"])
    assert not [f for f in doc["guard"]["findings"] if f["severity"] == "reject"]


@pytest.mark.slow
@pytest.mark.parametrize("path", WRONG, ids=lambda p: p.stem)
def test_wrong_solution_gets_expected_verdict(path: Path, sandbox_ready: None) -> None:
    doc = evaluated(str(path), "cpu", "test")
    validate(doc)
    assert doc["verdict"] == header(path)["expect"], _summary(doc)
    assert doc["reasons"], "a failed verdict must say why"


@pytest.mark.slow
@pytest.mark.parametrize("path", TRITON, ids=lambda p: p.stem)
def test_triton_solution_scores_on_npu_sim(path: Path, sandbox_ready: None) -> None:
    doc = evaluated(str(path), "npu-sim", "benchmark")
    validate(doc)
    assert doc["verdict"] == "PASSED", _summary(doc)
    assert doc["hardware"] == "npu-sim-v1"
    ran = [w for w in doc["workloads"] if w["status"] == "PASSED"]
    assert ran
    for w in ran:
        assert w["time_ms"] >= w["sol_ms"] > 0
        assert 0.0 <= w["sol_score"] <= 1.0
        assert w["baseline_ms"]["eager"] > 0
    assert 0.0 <= doc["score"]["sol_score"] <= 1.0


def test_catalogue_is_big_enough() -> None:
    assert len(CORRECT) >= 25 and len(TRITON) >= 10 and len(WRONG) >= 12
