"""`farm hardware` and `farm sol`: output, errors, and no torch import at start-up."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from farm.cli import main
from farm.suite import manifest

REPO = Path(__file__).parents[2]
VECTOR_ADD = REPO / "farm/suite/suites/core-v1/vector_add"


@pytest.fixture
def tiny_suite(tmp_path: Path) -> Path:
    root = tmp_path / "tiny-v1"
    shutil.copytree(VECTOR_ADD, root / "vector_add")
    manifest.write(root)
    return root


def test_hardware_json_lists_every_class(capsys):
    assert main(["hardware", "--json"]) == 0
    classes = json.loads(capsys.readouterr().out)
    by_name = {c["name"]: c for c in classes}
    assert len(by_name) == 8 and "npu-sim-v1" in by_name
    h100 = by_name["nvidia-h100"]
    peaks = {(p["dtype"], p["unit"]): p["flops"] for p in h100["peaks"]}
    assert peaks["bfloat16", "tensor"] == pytest.approx(989.4e12)
    assert h100["memory_bandwidth"] == pytest.approx(3.35e12) and h100["sources"]


def test_hardware_table(capsys):
    assert main(["hardware"]) == 0
    out = capsys.readouterr().out
    assert "amd-mi355x" in out and "2516.6" in out and "989.4" in out


def test_sol_json(tiny_suite, capsys):
    assert main(["sol", str(tiny_suite), "--hw", "nvidia-h200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["hardware"] == "nvidia-h200" and doc["suite"]["hash"]
    row = next(r for r in doc["rows"] if r["workload"] == "llama3-8b-residual-4k")
    assert row["bytes"] == 201326592 and row["bound"] == "memory"
    assert row["sol_ms"] == pytest.approx(201326592 / 4.8e12 * 1e3)


def test_sol_table(tiny_suite, capsys):
    assert main(["sol", str(tiny_suite), "--hw", "npu-sim-v1"]) == 0
    out = capsys.readouterr().out
    assert "vector_add" in out and "memory" in out
    assert "T_SOL includes the 8.5 µs every kernel costs on npu-sim-v1" in out


def test_sol_table_of_a_gpu_has_no_launch_floor(tiny_suite, capsys):
    assert main(["sol", str(tiny_suite), "--hw", "nvidia-h200"]) == 0
    out = capsys.readouterr().out
    assert "includes the" not in out and "overhead" not in out


def test_sol_unknown_class_is_a_one_line_error(tiny_suite, capsys):
    assert main(["sol", str(tiny_suite), "--hw", "nvidia-h10"]) == 2
    assert "did you mean 'nvidia-h100'" in capsys.readouterr().err


def test_commands_do_not_import_torch():
    code = (
        "import sys, farm.sol_commands, farm.hardware.commands, farm.hardware.detect, "
        "farm.sol, farm.scoring; assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
