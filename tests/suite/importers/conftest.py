"""Importer tests: each imports our own small fixtures (tests/fixtures/<format>/) into a
private FARM_HOME, loads the pinned suite and evaluates submissions on device cpu."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SUBMISSIONS = FIXTURES / "submissions"


@pytest.fixture
def farm_home(tmp_path, monkeypatch):
    monkeypatch.setenv("FARM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FARM_SANDBOX", "process")
    monkeypatch.setenv("FARM_ALLOW_UNSANDBOXED", "1")
    return tmp_path / "home"


def import_suite(fmt: str, name: str, *extra: str) -> int:
    from farm.cli import main

    return main(["suite", "import", fmt, str(FIXTURES / fmt), "--name", name, *extra])


def evaluate(source: Path, suite: str, problem: str) -> dict:
    from farm.harness.supervisor import evaluate as run_eval

    return run_eval(
        source, suite=suite, problem=problem, device="cpu", mode="test", sandbox="process"
    )
