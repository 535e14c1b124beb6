"""Each problem converts in a child process: a raise, a native abort, CPU spent past the limit or
a child that waits forever is one line of reason, and the problems after it still convert."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from farm.errors import SuiteError
from farm.suite.importers import common, isolation


def draft_by_name(path: Path, root: Path) -> common.ProblemDraft:
    """A stand-in converter whose behaviour is the file's stem."""
    if path.stem == "raises":
        raise ValueError("odd shape\nsecond line")
    if path.stem == "aborts":
        os.abort()  # as torch's C++ `terminate` ends a process
    if path.stem == "spins":
        while True:
            pass
    if path.stem == "waits":
        time.sleep(60)
    return common.ProblemDraft(
        name=path.stem,
        category="fused",
        description=os.environ.get("HF_HUB_OFFLINE", "unset"),
        signature="f(x)",
        inputs=[],
        outputs=[],
        dtype="float32",
        workloads=[],
        flops="0",
        compute_unit="vector",
        reference="",
    )


def convert(tmp_path: Path, stems: list[str], limits: isolation.Limits):
    for stem in stems:
        (tmp_path / f"{stem}.py").write_text("")
    paths = [tmp_path / f"{stem}.py" for stem in stems]
    empty = SuiteError("nothing here")
    return common.draft_all(paths, tmp_path, draft_by_name, empty=empty, limits=limits)


def test_a_failure_is_one_line_and_the_rest_convert_offline(tmp_path):
    drafts, skipped = convert(tmp_path, ["a", "raises", "b"], isolation.Limits(cpu_s=30))
    assert [d.name for d in drafts] == ["a", "b"]
    assert skipped == ["raises.py: ValueError: odd shape"]
    assert drafts[0].description == "1"  # HF_HUB_OFFLINE in the child: nothing is downloaded


@pytest.mark.slow
def test_an_abort_a_spin_and_a_wait_each_cost_only_their_own_problem(tmp_path):
    stems = ["aborts", "a", "spins", "b", "waits", "c"]
    drafts, skipped = convert(tmp_path, stems, isolation.Limits(cpu_s=1, wall_s=10))
    assert [d.name for d in drafts] == ["a", "b", "c"]
    assert skipped == [
        "aborts.py: the source's code ended the converting process (SIGABRT; native code aborted)",
        "spins.py: converting it used over 1 s of CPU time (probing its shapes)",
        "waits.py: converting it took over 10 s of wall time (stopped)",
    ]


def test_death_reasons_name_the_cause():
    limits = isolation.Limits(cpu_s=5)
    assert "over 5 s of CPU time" in isolation.death_reason(-24, limits)
    assert "SIGSEGV" in isolation.death_reason(-11, limits)
    assert "exit status 3" in isolation.death_reason(3, limits)
