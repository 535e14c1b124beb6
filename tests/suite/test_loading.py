"""Sibling modules of an imported source stay private to it, whatever the path's form."""

from __future__ import annotations

import os
from pathlib import Path

from farm.suite.importers.loading import load_module


def test_each_problem_gets_its_own_utils_even_through_relative_paths(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "utils.py").write_text(f"WHO = {name!r}\n")
        (tmp_path / name / "reference.py").write_text("from utils import WHO\n")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        first = load_module(Path("a/reference.py"))
        second = load_module(Path("b/reference.py"))
    finally:
        os.chdir(cwd)
    assert (first.WHO, second.WHO) == ("a", "b")
