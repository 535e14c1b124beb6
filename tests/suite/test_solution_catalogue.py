"""tests/solutions stays usable: valid headers, real problems, every category covered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.suite.conftest import core_suite

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"
HEADER = re.compile(r"\A# problem: (?P<problem>\S+)\n# expect: (?P<expect>\S+)\n")
VERDICTS = {"PASSED", "INCORRECT", "RUNTIME_ERROR", "COMPILE_ERROR"}


def catalogue(kind: str) -> dict[Path, tuple[str, str]]:
    """Map each solution file of `kind` (correct | wrong) to (problem, expected verdict)."""
    found = {}
    for path in sorted((SOLUTIONS / kind).glob("*.py")):
        match = HEADER.match(path.read_text())
        assert match, f"{path.name}: the first two lines must be the header"
        found[path] = (match["problem"], match["expect"])
    return found


@pytest.mark.parametrize("kind", ["correct", "wrong"])
def test_headers_name_real_problems_and_verdicts(kind: str) -> None:
    for path, (problem, expect) in catalogue(kind).items():
        assert problem in core_suite().problems, path.name
        assert path.name.startswith(f"{problem}__"), path.name
        assert expect in VERDICTS, path.name
        assert (expect == "PASSED") == (kind == "correct"), path.name


@pytest.mark.parametrize("kind", ["correct", "wrong"])
def test_every_category_has_solutions(kind: str) -> None:
    covered = {core_suite().problem(problem).category for problem, _ in catalogue(kind).values()}
    all_categories = {p.category for p in core_suite().problems.values()}
    assert covered == all_categories, all_categories - covered


def test_enough_honest_triton_kernels() -> None:
    correct = catalogue("correct")
    triton = [p for p in correct if "@triton.jit" in p.read_text()]
    assert len(correct) >= 30
    assert len(triton) >= 14
    for path in triton:
        assert "def kernel(" in path.read_text(), path.name


def test_wrong_solutions_cover_each_kind_of_failure() -> None:
    expects = {expect for _, expect in catalogue("wrong").values()}
    assert {"INCORRECT", "RUNTIME_ERROR", "COMPILE_ERROR"} <= expects
