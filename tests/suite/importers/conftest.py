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
    ).to_json()


@pytest.fixture(scope="session")
def _imported_home(tmp_path_factory):
    """One FARM_HOME holding the three fixture suites, imported once for the tests that only
    read or evaluate them (importing is the expensive part)."""
    home = tmp_path_factory.mktemp("imported") / "home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FARM_HOME", str(home))
        for fmt, name in (("kernelbench", "kb-test"), ("gpumode", "gm-test")):
            assert import_suite(fmt, name) == 0
        assert import_suite("flashinfer", "fi-test") == 0
    return home


@pytest.fixture
def imported(_imported_home, monkeypatch):
    from farm.suite import loader

    monkeypatch.setenv("FARM_HOME", str(_imported_home))
    monkeypatch.setenv("FARM_SANDBOX", "process")
    monkeypatch.setenv("FARM_ALLOW_UNSANDBOXED", "1")
    loader._load_suite_cached.cache_clear()
    return _imported_home
