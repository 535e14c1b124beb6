"""`farm rejudge`: a board's entries run again, the changes reported, then applied on request."""

from __future__ import annotations

import json

import pytest

from farm.cli import main
from tests.client.conftest import run_json

BOARD = "/api/boards/core-v1/softmax/npu-sim-v1/"


@pytest.fixture
def server(stub, monkeypatch):
    monkeypatch.setenv("FARM_URL", stub.url)
    monkeypatch.setenv("FARM_TOKEN", "fu_operator")
    monkeypatch.setenv("COLUMNS", "160")  # the report's table on one line per entry
    return stub


def entry(rank: int, submission: int, run: int, user: str) -> dict:
    return {"rank": rank, "user": user, "submission": submission, "run": run, "sol_score": 0.9}


def submission(sid: int, run: int, state: str = "queued") -> dict:
    runs = [{"id": run, "hardware": "npu-sim-v1", "mode": "leaderboard", "state": state}]
    return {
        "id": sid,
        "problem": "softmax",
        "suite": "core-v1",
        "mode": "leaderboard",
        "state": state,
        "language": "triton",
        "filename": "k.py",
        "runs": runs,
    }


def board_of_two(server) -> None:
    """Entries 1 (ada) and 2 (bob); on the farm as it is now, ada's kernel is INCORRECT."""
    board = {"suite": "core-v1", "problem": "softmax", "hardware": "npu-sim-v1"}
    board["entries"] = [entry(1, 1, 11, "ada"), entry(2, 2, 12, "bob")]
    server.reply("GET", BOARD, 200, board)
    for sid, run in ((1, 11), (2, 12)):
        server.reply("GET", f"/api/submissions/{sid}/", 200, submission(sid, run, "done"))
        server.reply("GET", f"/api/submissions/{sid}/source/", 200, f"def kernel(x):  # {sid}\n")
    created = {"submissions": [submission(21, 31), submission(22, 32)]}
    server.reply("POST", "/api/submissions/", 201, created)
    incorrect = run_json(31, verdict="INCORRECT", category="kernel")
    incorrect["result"]["document"]["reasons"] = [
        {"code": "MISMATCH", "detail": "max abs error 0.31 > atol 0.01", "workload": "small"}
    ]
    server.reply("GET", "/api/runs/31/", 200, incorrect)
    server.reply("GET", "/api/runs/32/", 200, run_json(32, category="kernel"))


def test_a_dry_run_reports_and_changes_nothing(server, tmp_path, capsys):
    board_of_two(server)
    report = tmp_path / "report.json"
    assert main(["rejudge", "softmax", "--hw", "npu-sim-v1", "--report", str(report)]) == 0
    sent = next(r for r in server.requests if r["path"] == "/api/submissions/")["body"]
    assert [s["source"] for s in sent["submissions"]] == [
        "def kernel(x):  # 1\n",
        "def kernel(x):  # 2\n",
    ]
    assert all(s["private"] and s["mode"] == "leaderboard" for s in sent["submissions"])
    assert sent["submissions"][0]["language"] == "triton"
    doc = json.loads(report.read_text())
    assert doc["schema"] == "farm.rejudge/1"
    changes = {e["submission"]: (e["verdict"], e["category"]) for e in doc["entries"]}
    assert changes == {1: ("INCORRECT", "kernel"), 2: ("PASSED", "kernel")}
    out = capsys.readouterr()
    assert "fails now" in out.out and "1: MISMATCH: max abs error 0.31 > atol 0.01" in out.out
    assert "1 entry would leave the board" in out.err and "--apply" in out.err
    assert not [r for r in server.requests if r["path"].endswith("/hacked/")]


def test_apply_hides_only_what_fails_now(server, tmp_path, capsys):
    board_of_two(server)
    report = tmp_path / "report.json"
    assert main(["rejudge", "softmax", "--hw", "npu-sim-v1", "--report", str(report)]) == 0
    server.reply("POST", "/api/submissions/1/hacked/", 200, submission(1, 11, "done"))
    assert main(["rejudge", "--apply", str(report)]) == 0
    marked = [r for r in server.requests if r["path"].endswith("/hacked/")]
    assert [r["path"] for r in marked] == ["/api/submissions/1/hacked/"]
    note = marked[0]["body"]["note"]
    assert marked[0]["body"]["hacked"] is True
    assert "(run 31): now INCORRECT: MISMATCH: max abs error 0.31 > atol 0.01" in note
    assert "1 entry taken off the boards" in capsys.readouterr().out


def test_a_farm_outcome_is_reported_never_applied(server, tmp_path):
    board_of_two(server)
    server.routes[("GET", "/api/runs/31/")].clear()
    server.reply("GET", "/api/runs/31/", 200, run_json(31, verdict="NODE_FAULT", category="farm"))
    report = tmp_path / "report.json"
    assert main(["rejudge", "softmax", "--hw", "npu-sim-v1", "--report", str(report)]) == 0
    assert json.loads(report.read_text())["entries"][0]["category"] == "farm"
    assert main(["rejudge", "--apply", str(report)]) == 0
    assert not [r for r in server.requests if r["path"].endswith("/hacked/")]


def test_bad_arguments_and_reports_exit_2(server, tmp_path, capsys):
    assert main(["rejudge", "softmax"]) == 2
    assert "farm rejudge PROBLEM --hw HARDWARE" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "farm.result/1"}')
    assert main(["rejudge", "--apply", str(bad)]) == 2
    assert "not a report of `farm rejudge`" in capsys.readouterr().err
