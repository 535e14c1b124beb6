"""The candidate worker the CLI starts before the trusted side imports torch: started only for
named workloads, taken over by the supervisor only for the evaluation it was started for."""

from __future__ import annotations

import subprocess
import sys

from farm.harness import prestart
from farm.harness.supervisor import evaluate

ARGS = {"suite": "core-v1", "problem": "vector_add", "device": "cpu", "sandbox": "process"}


def test_nothing_starts_without_named_workloads_or_with_unknown_ones(monkeypatch):
    monkeypatch.setenv("FARM_ALLOW_UNSANDBOXED", "1")
    assert prestart.start(**ARGS, workloads=None) is None
    assert prestart.start(**ARGS, workloads=["no-such-workload"]) is None
    assert prestart.start(**{**ARGS, "problem": "no_such_problem"}, workloads=["small"]) is None


def test_the_supervisor_takes_over_the_worker_it_was_started_for(tmp_path, monkeypatch):
    monkeypatch.setenv("FARM_ALLOW_UNSANDBOXED", "1")
    early = prestart.start(**ARGS, workloads=["small-4k"])
    assert early is not None
    other = tmp_path / "k.py"
    other.write_text("def kernel(a, b):\n    return a + b\n")
    try:
        # another evaluation (another problem) does not take it
        assert not early.serves(early.suite_root, "softmax", "cpu", ["small-4k"])
        doc = evaluate(other, **ARGS, mode="test", workloads=["small-4k"], early=early).to_json()
        assert doc["verdict"] == "PASSED", doc["reasons"]
        assert early.worker.proc.poll() is not None  # used, then discarded
    finally:
        early.close()
    assert not early.root.exists()


def test_starting_a_worker_imports_no_torch():
    code = (
        "import sys, farm.harness.prestart, farm.harness.channel; sys.exit('torch' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
