"""Pinning: the manifest notices every change, and the CLI names the changed file."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from farm.errors import SuiteError
from farm.suite import manifest
from farm.suite.loader import BUNDLED_SUITES

REPO = Path(__file__).resolve().parents[2]
CORE = BUNDLED_SUITES / "core-v1"


@pytest.fixture
def suite_copy(tmp_path: Path) -> Path:
    """A pinned copy of core-v1 that tests may edit."""
    root = tmp_path / "core-v1"
    shutil.copytree(CORE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def farm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "farm", *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def test_bundled_suite_matches_its_manifest() -> None:
    assert manifest.differences(CORE) == []
    assert manifest.verify(CORE) == manifest.read_hash(CORE)


def test_edited_file_is_named(suite_copy: Path) -> None:
    target = suite_copy / "softmax" / "reference.py"
    target.write_text(target.read_text() + "\n# tweak\n")
    assert manifest.differences(suite_copy) == [
        "core-v1/softmax/reference.py: edited (sha256 differs from the manifest)"
    ]
    with pytest.raises(SuiteError, match=r"softmax/reference.py: edited"):
        manifest.verify(suite_copy)


def test_added_file_is_named(suite_copy: Path) -> None:
    (suite_copy / "softmax" / "notes.txt").write_text("extra\n")
    assert manifest.differences(suite_copy) == [
        "core-v1/softmax/notes.txt: not in the manifest (added after pinning)"
    ]


def test_removed_file_is_named(suite_copy: Path) -> None:
    (suite_copy / "matmul" / "reference.py").unlink()
    assert manifest.differences(suite_copy) == [
        "core-v1/matmul/reference.py: missing (pinned in the manifest)"
    ]


def test_caches_do_not_count(suite_copy: Path) -> None:
    cache = suite_copy / "softmax" / "__pycache__"
    cache.mkdir()
    (cache / "reference.cpython-311.pyc").write_bytes(b"\0")
    assert manifest.differences(suite_copy) == []


def test_cli_verify_prints_the_hash() -> None:
    result = farm("suite", "verify", "core-v1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == manifest.read_hash(CORE)


def test_cli_verify_fails_naming_the_edited_file(suite_copy: Path) -> None:
    target = suite_copy / "rmsnorm" / "problem.yaml"
    target.write_text(target.read_text().replace("1.0e-5", "1.0e-4", 1))
    result = farm("suite", "verify", str(suite_copy))
    assert result.returncode == 2
    assert "core-v1/rmsnorm/problem.yaml: edited" in result.stderr
    assert result.stdout == ""


def test_cli_pin_makes_a_new_version(suite_copy: Path) -> None:
    old = manifest.read_hash(suite_copy)
    target = suite_copy / "softmax" / "problem.yaml"
    target.write_text(target.read_text().replace("Row-wise softmax", "Row softmax"))
    pinned = farm("suite", "pin", str(suite_copy))
    assert pinned.returncode == 0, pinned.stderr
    new = pinned.stdout.strip()
    assert new != old and new == manifest.read_hash(suite_copy)
    assert farm("suite", "verify", str(suite_copy)).stdout.strip() == new


def test_cli_pin_refuses_a_malformed_problem(suite_copy: Path) -> None:
    target = suite_copy / "softmax" / "problem.yaml"
    target.write_text(target.read_text().replace("category: softmax", "category: sorting"))
    result = farm("suite", "pin", str(suite_copy))
    assert result.returncode == 2
    assert "core-v1/softmax/problem.yaml: category must be one of" in result.stderr
    assert manifest.differences(suite_copy)  # the old manifest is untouched


def test_cli_problems_lists_every_problem() -> None:
    result = farm("problems", "core-v1")
    assert result.returncode == 0, result.stderr
    for name in ("vector_add", "softmax", "rmsnorm", "matmul", "attention_backward"):
        assert name in result.stdout
    assert "pinned" in result.stdout


def test_cli_problems_filters_by_category() -> None:
    result = farm("problems", "--category", "gemm")
    assert result.returncode == 0, result.stderr
    assert "matmul_fp8" in result.stdout and "softmax" not in result.stdout
    wrong = farm("problems", "--category", "gemmm")
    assert wrong.returncode == 2 and "did you mean 'gemm'?" in wrong.stderr
