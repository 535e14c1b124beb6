"""The static guard over the catalogue of cheats (tests/hacks/) and the honest solutions
(tests/solutions/correct/): every cheat it should catch is caught, no honest kernel is rejected."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from farm.guard.rules import RULES
from farm.guard.static import scan_source

TESTS = Path(__file__).resolve().parents[1]
HACKS = sorted(p for p in (TESTS / "hacks").glob("*.py") if not p.name.startswith("test_"))
HONEST = sorted(
    [
        *(TESTS / "solutions" / "correct").rglob("*.py"),
        *(TESTS / "solutions" / "compiled").rglob("*.py"),
    ]
)
HEADER = re.compile(r"^# (problem|cheat|source|static|expect): (.+)$", re.M)


def headers(path: Path) -> dict[str, str]:
    return dict(HEADER.findall(path.read_text()))


def test_catalogue_has_at_least_25_cheats():
    assert len(HACKS) >= 25


@pytest.mark.parametrize("path", HACKS, ids=lambda p: p.stem)
def test_hack_header_is_complete(path):
    h = headers(path)
    assert set(h) == {"problem", "cheat", "source", "static", "expect"}, path.name
    assert h["expect"] in {"REJECTED", "INCORRECT", "RUNTIME_ERROR", "TIMEOUT"}
    assert h["static"] == "none" or h["static"] in RULES


@pytest.mark.parametrize(
    "path", [p for p in HACKS if headers(p)["static"] != "none"], ids=lambda p: p.stem
)
def test_static_guard_catches_hack(path):
    expected = headers(path)["static"]
    found = scan_source(path.read_text(), filename=path.name)
    assert expected in {f.code for f in found}, found
    if RULES[expected].severity == "reject":
        assert any(f.severity == "reject" for f in found)


@pytest.mark.parametrize("path", HACKS, ids=lambda p: p.stem)
def test_hacks_expected_rejected_by_source_have_a_reject_finding(path):
    h = headers(path)
    if h["expect"] != "REJECTED" or h["static"] == "none":
        pytest.skip("caught at run time, not by the source")
    assert any(f.severity == "reject" for f in scan_source(path.read_text()))


@pytest.mark.parametrize("path", HONEST, ids=lambda p: str(p.relative_to(TESTS)))
def test_honest_solution_has_no_reject(path):
    found = scan_source(path.read_text(), filename=path.name)
    assert not [f for f in found if f.severity == "reject"], found
