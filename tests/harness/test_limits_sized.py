"""Limits sized per workload, with the real worker in the node's sandbox: a memory hog on a
64x256 softmax ends with MEMORY_LIMIT on CPU and npu-sim and the node goes on serving; a hang
ends at the time limit, which an operator may lower per node (FARM_LIMIT_*), with a TIMEOUT
naming it. The same submissions on the H100: bench/gpu_sandbox.py (docs/security.md)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from farm.harness.supervisor import evaluate

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "bench" / "gpu_sandbox_kernels"
HONEST = REPO / "tests" / "solutions" / "correct" / "softmax__triton.py"
pytestmark = pytest.mark.slow


def run(path: Path, device: str) -> dict:
    return evaluate(
        path, problem="softmax", device=device, mode="test", workloads=["small"]
    ).to_json()


@pytest.mark.parametrize("device", ["cpu", "npu-sim"])
def test_memory_hog_gets_memory_limit_and_the_node_keeps_serving(device, sandbox_ready):
    doc = run(KERNELS / "host_memory_hog.py", device)  # 12 GiB on a 64x256 softmax
    assert doc["verdict"] == "RUNTIME_ERROR"
    assert "MEMORY_LIMIT" in {r["code"] for r in doc["reasons"]}, doc["reasons"]
    limit = doc["environment"]["limits"]["memory_bytes"]
    assert limit < 12 << 30  # sized from the workload, not a flat cap above the hog
    assert run(HONEST, device)["verdict"] == "PASSED"


@pytest.mark.quiet_host
def test_a_hang_ends_at_the_nodes_time_limit(sandbox_ready, monkeypatch):
    monkeypatch.setenv("FARM_LIMIT_COMPILE_S", "2")
    monkeypatch.setenv("FARM_LIMIT_CALL_FLOOR_S", "2")
    started = time.monotonic()
    doc = run(KERNELS / "hang.py", "cpu")
    assert doc["verdict"] == "TIMEOUT"
    (reason,) = [r for r in doc["reasons"] if r["code"] == "TIMEOUT"]
    # 2 s to compile + 2 s floor + the reference's own time x the stated factor
    assert re.search(r"within its limit of 4\.\d s", reason["detail"]), reason["detail"]
    assert time.monotonic() - started < 30
