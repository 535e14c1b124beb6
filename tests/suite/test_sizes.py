"""Which workload sizes each device runs, and what a result says about the sizes it did not
run (farm.suite.model: cpu_workloads, size_note, size_statement)."""

from __future__ import annotations

from pathlib import Path

import pytest

from farm.harness.targets import resolve_target
from farm.suite.loader import load_problem, load_suite
from farm.suite.model import CPU_SOURCE_BYTES, Problem
from tests.suite.test_loader_errors import with_changes, write_problem

HUGE = 1 << 27  # N: 512 MiB of input and 512 MiB of output at float32


def _problem(tmp_path: Path, *workloads: dict) -> Problem:
    directory = write_problem(tmp_path, with_changes(workloads=list(workloads)))
    return load_problem(directory, label="suite-x/")


def _small(wid: str, source: str) -> dict:
    return {"id": wid, "axes": {"N": 8}, "small": True, "scaled_from": source}


@pytest.fixture
def mixed(tmp_path: Path) -> Problem:
    """A source too big for a host (a), one a host holds (c), their scaled copies, and a large
    workload that is nobody's source (b)."""
    return _problem(
        tmp_path,
        {"id": "a", "axes": {"N": HUGE}},
        _small("sa", "a"),
        {"id": "b", "axes": {"N": 2048}},
        {"id": "c", "axes": {"N": 4096}},
        _small("sc", "c"),
    )


def test_cpu_runs_the_source_sizes_it_holds_beside_their_scaled_copies(mixed):
    assert [w.id for w in mixed.cpu_workloads()] == ["sa", "c", "sc"]
    assert mixed.host_bytes(mixed.workload("a")) > CPU_SOURCE_BYTES
    cpu = resolve_target("cpu", None).select(mixed, None)
    assert [w.id for w in cpu.run] == ["sa", "c", "sc"]
    npu = resolve_target("npu-sim", None).select(mixed, None)
    assert [w.id for w in npu.run] == ["sa", "sc"]  # the simulator keeps to the size rule
    gpu_like = resolve_target("npu-sim", None).select(mixed, None, every=True)
    assert len(gpu_like.run) == 5


def test_the_size_note_says_which_sources_cpu_runs_and_which_not(mixed):
    assert mixed.size_note() == (
        "npu-sim runs only the small workloads (sa, sc), cpu those and the source sizes it "
        "holds (sa, c, sc); the others (a, b) run on GPUs and in npu-sim leaderboard runs; "
        "sa is a scaled down to the npu-sim size rule, and a verdict on it is that size's, not "
        "a's (cpu does not run a: 1024 MiB at float32 width, over the 256 MiB it holds); sc is "
        "c scaled down to the npu-sim size rule, and a verdict on it is that size's, so cpu "
        "runs c too"
    )


def test_a_result_says_which_sizes_ran_and_which_did_not(mixed):
    statement = mixed.size_statement(["sa", "c", "sc", "secret-0"])
    assert statement is not None
    assert statement.startswith("ran: sa, c, sc; not run: a, b (npu-sim runs only")
    assert "not a's (cpu does not run a" in statement
    every = mixed.size_statement(["a", "sa", "b", "c", "sc"])
    assert every == "ran: a, sa, b, c, sc (every workload of the problem)"
    assert mixed.size_statement([]) is None


def test_a_problem_without_copies_keeps_cpu_to_its_small_workloads(tmp_path):
    plain = _problem(
        tmp_path, {"id": "a", "axes": {"N": 4096}}, {"id": "s", "axes": {"N": 8}, "small": True}
    )
    assert [w.id for w in plain.cpu_workloads()] == ["s"]
    assert plain.size_statement(["s"]) == (
        "ran: s; not run: a (cpu and npu-sim run only the small workloads (s); the others (a) "
        "run on GPUs and in npu-sim leaderboard runs)"
    )


def _document(suite_hash: str) -> dict:
    return {
        "schema": "farm.result/1",
        "suite": {"name": "core-v1", "hash": suite_hash},
        "problem": "vector_add",
        "hardware": "cpu",
        "mode": "test",
        "verdict": "PASSED",
        "reasons": [],
        "score": {"sol_score": None},
        "workloads": [_entry(False), _entry(True)],
        "environment": {},
        "guard": {"findings": []},
    }


def test_a_local_result_document_is_read_against_the_pinned_suite():
    from farm.result import Result
    from farm.suite.sizes import result_statement

    doc = _document(load_suite("core-v1").hash)
    statement = result_statement(Result.from_json(doc))
    assert statement is not None
    assert statement.startswith("ran: small-4k; not run: llama3-8b-residual-4k")
    assert result_statement(Result.from_json(_document("0" * 64))) is None


def test_farm_eval_prints_the_sizes_under_its_table(capsys):
    from farm.harness.commands import print_result

    print_result(_document(load_suite("core-v1").hash))
    assert "sizes: ran: small-4k; not run: llama3-8b-residual-4k" in capsys.readouterr().out


def _entry(secret: bool) -> dict:
    return {
        "id": "small-4k",
        "status": "PASSED",
        "secret": secret,
        "time_ms": None,
        "sol_ms": None,
        "sol_score": None,
        "speedup": {},
        "baseline_ms": {},
    }
