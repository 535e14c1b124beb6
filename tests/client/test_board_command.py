"""`farm board`: the web board's per-workload columns, eager and SOL rows, shared ranks and copy
flags, read from the board API (against the stub server)."""

from __future__ import annotations

import pytest

from farm.cli import main

BOARD = "/api/boards/core-v1/softmax/npu-sim-v1/"


def _entry(rank: int, user: str, submission: int, t_small: float, **extra) -> dict:  # type: ignore[no-untyped-def]
    return {
        "rank": rank,
        "user": user,
        "submission": submission,
        "run": submission + 100,
        "sol_score": 0.9,
        "time_ms": t_small,
        "sol_ms": 0.001,
        "fraction_of_sol": 0.5,
        "speedup_eager": 2.0,
        "speedup_compile": 1.5,
        "workloads": {
            "small": {"time_ms": t_small, "sol_ms": 0.001, "sol_score": 0.9, "eager_ms": 0.004},
            "mixtral-router-4k": {
                "time_ms": 0.02,
                "sol_ms": 0.005,
                "sol_score": 0.8,
                "eager_ms": 0.05,
            },
        },
        **extra,
    }


@pytest.fixture
def board(stub, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FARM_URL", stub.url)
    monkeypatch.setenv("FARM_TOKEN", "fu_test")
    monkeypatch.setenv("COLUMNS", "240")  # a wide terminal: rich wraps cells on a narrow one
    entries = [
        _entry(1, "ada", 7, 0.002, tied=True),
        _entry(
            1,
            "bob",
            9,
            0.002,
            tied=True,
            copy_of={"submission": 7, "user": "ada", "likeness": 0.97},
        ),
    ]
    doc = {
        "suite": "core-v1",
        "problem": "softmax",
        "hardware": "npu-sim-v1",
        "deterministic": True,
        "entries": entries,
    }
    stub.reply("GET", BOARD, 200, doc)
    return stub


def test_board_shows_workload_columns_baseline_and_sol_rows(board, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["board", "softmax", "--hw", "npu-sim-v1"]) == 0
    out = capsys.readouterr().out
    assert "small" in out and "mixtral-router-4k" in out
    assert "2.00 us" in out and "50.0% SOL" in out  # small: 0.002 ms, SOL 0.001 ms
    assert "20.00 us" in out and "25.0% SOL" in out  # mixtral-router-4k
    assert "eager baseline" in out and "4.00 us" in out and "50.00 us" in out
    assert "speed of light" in out and "5.00 us" in out
    assert "1.50x" in out  # vs compile


def test_board_flags_copies_and_shared_ranks(board, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["board", "softmax", "--hw", "npu-sim-v1", "--no-workloads"]) == 0
    out = capsys.readouterr().out
    assert out.count("=1") == 2
    assert "≈ copy of #7 (ada)" in out
    assert "#9 0.97" in out and "shown, not removed" in out
    assert "deterministic" in out and "earlier submission is listed first" in out
    assert "mixtral-router-4k" not in out and "eager baseline" not in out
