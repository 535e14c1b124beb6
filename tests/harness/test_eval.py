"""`farm eval` end to end: forms, modes, exit codes and error messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from farm.harness.supervisor import evaluate
from farm.result import validate

ROOT = Path(__file__).resolve().parents[2]

NATIVE = "def kernel(a, b):\n    return a + b\n"
KERNELBENCH = """import torch

class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return a + b
"""
GPUMODE = "def custom_kernel(data):\n    a, b = data\n    return a + b\n"


def _farm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "farm", *args], capture_output=True, text=True, cwd=ROOT, timeout=600
    )


@pytest.mark.parametrize(
    ("source", "form"), [(NATIVE, "native"), (KERNELBENCH, "kernelbench"), (GPUMODE, "gpumode")]
)
def test_every_submission_form_is_accepted(tmp_path, source, form, sandbox_ready):
    path = tmp_path / "k.py"
    path.write_text(source)
    doc = evaluate(path, problem="vector_add", device="cpu", mode="test").to_json()
    assert doc["verdict"] == "PASSED", doc["reasons"]
    assert doc["submission"]["form"] == form


def test_benchmark_document_has_the_contract_keys(tmp_path, sandbox_ready):
    path = tmp_path / "k.py"
    path.write_text(NATIVE)
    out = tmp_path / "r.json"
    proc = _farm(
        "eval", str(path), "--problem", "vector_add", "--device", "npu-sim", "--json", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    doc = validate(json.loads(out.read_text()))
    assert doc["suite"]["name"] == "core-v1" and len(doc["suite"]["hash"]) == 64
    assert doc["hardware"] == "npu-sim-v1" and doc["mode"] == "benchmark"
    w = doc["workloads"][0]
    assert {"id", "status", "time_ms", "sol_ms", "baseline_ms", "sol_score"} <= set(w)
    assert w["baseline_ms"]["eager"] > 0 and w["sol_ms"] > 0
    assert doc["environment"]["before"] and doc["environment"]["sandbox"]


@pytest.mark.quiet_host
def test_leaderboard_mode_uses_a_secret_seed(tmp_path, sandbox_ready, monkeypatch):
    path = tmp_path / "k.py"
    path.write_text(NATIVE)
    monkeypatch.setenv("FARM_SECRET_SEED", "s3cret")
    doc = evaluate(
        path,
        problem="vector_add",
        device="cpu",
        mode="leaderboard",
        baselines=False,
        policy={"budget_ms": 50},
    ).to_json()
    assert doc["verdict"] == "PASSED" and doc["seeds"]["secret"] is True
    assert doc["workloads"] and all(w["secret"] is True for w in doc["workloads"])
    assert "s3cret" not in json.dumps(doc)


def test_a_verdict_other_than_passed_exits_non_zero_and_its_reasons_print_whole(
    tmp_path, sandbox_ready
):
    path = tmp_path / "k.py"
    path.write_text("def kernel(a, b):\n    return a - b\n")
    proc = _farm("eval", str(path), "--problem", "vector_add", "--mode", "test", "--json", "-")
    assert proc.returncode == 5, proc.stderr  # INCORRECT: farm.result.EXIT_NOT_PASSED
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "INCORRECT"
    printed = _farm("eval", str(path), "--problem", "vector_add", "--mode", "test")
    assert printed.returncode == 5
    text = " ".join(printed.stdout.split())  # the terminal's wrapping undone
    detail = " ".join(doc["reasons"][0]["detail"].split())
    assert detail in text, "a reason is printed whole"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--problem", "softmx"], "problem 'softmx' not in suite core-v1"),
        (["--problem", "softmax", "--suite", "core-v9"], "suite 'core-v9' not in"),
    ],
)
def test_bad_arguments_exit_two_with_a_hint(tmp_path, args, message):
    path = tmp_path / "k.py"
    path.write_text(NATIVE)
    proc = _farm("eval", str(path), *args)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_missing_file_and_missing_entry_point(tmp_path, sandbox_ready):
    proc = _farm("eval", str(tmp_path / "nope.py"), "--problem", "softmax")
    assert proc.returncode == 2 and "no such file" in proc.stderr
    path = tmp_path / "k.py"
    path.write_text("x = 1\n")
    doc = evaluate(path, problem="vector_add", device="cpu", mode="test").to_json()
    assert doc["verdict"] == "COMPILE_ERROR"
    assert "defines no `kernel` function" in doc["reasons"][0]["detail"]


def test_non_utf8_and_oversized_sources_are_refused(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"\xff\xfe def kernel")
    proc = _farm("eval", str(bad), "--problem", "vector_add")
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr
    big = tmp_path / "big.py"
    big.write_text("#" * (2 << 20))
    proc = _farm("eval", str(big), "--problem", "vector_add")
    assert proc.returncode == 2 and "limit" in proc.stderr
