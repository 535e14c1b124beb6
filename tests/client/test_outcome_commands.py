"""What the CLI says about an outcome: the exit code of every verdict, whole reasons, a file
that does not parse, `farm cancel`, and where a queued run stands."""

from __future__ import annotations

import pytest

from farm.cli import main
from tests.client.conftest import run_json, submission_json

SUBMIT = ["submit", "--problem", "softmax", "--hw", "npu-sim-v1"]


@pytest.fixture
def server(stub, monkeypatch):
    monkeypatch.setenv("FARM_URL", stub.url)
    monkeypatch.setenv("FARM_TOKEN", "fu_test")
    return stub


def kernel_file(tmp_path, text: str = "def kernel(x):\n    return x.softmax(-1)\n") -> str:
    path = tmp_path / "k.py"
    path.write_text(text)
    return str(path)


def waited(server, tmp_path, *runs: dict) -> int:
    ids = [(r["id"], r["state"]) for r in runs]
    server.reply("POST", "/api/submissions/", 201, submission_json(runs=ids))
    server.reply("GET", "/api/submissions/7/", 200, submission_json(runs=ids))
    for r in runs:
        server.reply("GET", f"/api/runs/{r['id']}/", 200, r)
    return main([*SUBMIT, kernel_file(tmp_path), "--wait"])


@pytest.mark.parametrize(
    ("verdict", "category", "code"),
    [
        ("PASSED", "kernel", 0),
        ("INCORRECT", "kernel", 5),
        ("COMPILE_ERROR", "kernel", 5),
        ("RUNTIME_ERROR", "kernel", 5),
        ("TIMEOUT", "kernel", 5),
        ("REJECTED", "kernel", 6),
        ("UNSUPPORTED", "farm", 1),
        ("INCONCLUSIVE", "farm", 1),
        ("NODE_FAULT", "farm", 1),
    ],
)
def test_every_verdict_but_passed_exits_non_zero(server, tmp_path, verdict, category, code):
    assert waited(server, tmp_path, run_json(11, verdict=verdict, category=category)) == code


def test_a_cancelled_run_exits_1_and_a_kernel_verdict_outranks_a_farm_outcome(server, tmp_path):
    cancelled = run_json(11, state="failed", verdict=None, category="farm")
    assert waited(server, tmp_path, cancelled) == 1
    server.routes.clear()
    incorrect = run_json(12, verdict="INCORRECT", category="kernel")
    assert waited(server, tmp_path, cancelled, incorrect) == 5


def test_reasons_are_shown_whole(server, capsys):
    run = run_json(11, verdict="RUNTIME_ERROR")
    detail = "x" * 6000 + " the-last-words"
    run["result"]["document"]["reasons"] = [{"code": "RUNTIME_ERROR", "detail": detail}]
    server.reply("GET", "/api/runs/11/", 200, run)
    assert main(["status", "11", "--run"]) == 0
    out = capsys.readouterr().out
    assert "the-last-words" in out and out.count("x") >= 6000


def test_a_file_that_does_not_parse_is_refused_before_the_upload(server, tmp_path, capsys):
    path = kernel_file(tmp_path, "def kernel(x)\n    return x\n")
    assert main([*SUBMIT, path]) == 2
    err = capsys.readouterr().err
    assert f"{path}:1:" in err and "expected ':'" in err and "def kernel(x)" in err
    assert "python -m py_compile FILE" in err
    assert server.count("POST", "/api/submissions/") == 0


def test_cancel_runs(server, capsys):
    detail = "cancelled by ada while queued"
    cancelled = run_json(
        11, state="failed", verdict=None, failure_code="CANCELLED", failure_detail=detail
    )
    server.reply("POST", "/api/runs/11/cancel/", 200, cancelled)
    server.reply("POST", "/api/runs/12/cancel/", 409, {"detail": "run 12 has finished"})
    assert main(["cancel", "11"]) == 0
    assert f"run 11 (npu-sim-v1): {detail}" in capsys.readouterr().out
    assert main(["cancel", "12", "11"]) == 2
    captured = capsys.readouterr()
    assert "run 12: run 12 has finished" in captured.err and "1 of 2 run(s)" in captured.err
    assert f"run 11 (npu-sim-v1): {detail}" in captured.out


def test_cancel_a_submissions_unfinished_runs(server, capsys):
    server.reply(
        "GET", "/api/submissions/7/", 200, submission_json(runs=[(11, "queued"), (12, "done")])
    )
    server.reply("POST", "/api/runs/11/cancel/", 200, run_json(11, state="failed", verdict=None))
    assert main(["cancel", "--submission", "7"]) == 0
    assert server.count("POST", "/api/runs/11/cancel/") == 1
    assert server.count("POST", "/api/runs/12/cancel/") == 0
    server.routes.clear()
    server.reply("GET", "/api/submissions/7/", 200, submission_json(runs=[(12, "done")]))
    assert main(["cancel", "--submission", "7"]) == 2
    assert "every run has finished" in capsys.readouterr().err


def test_status_shows_where_a_queued_run_stands(server, capsys):
    warning = "no node serves npu-sim-v1 right now (this farm has no node for it)"
    queued = run_json(11, state="queued", verdict=None, queue={"position": 3, "warning": warning})
    server.reply("GET", "/api/runs/11/", 200, queued)
    assert main(["status", "11", "--run"]) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert "run 11: #3 in the npu-sim-v1 queue" in out and f"warning: {warning}" in out


def test_status_tells_the_owner_why_a_submission_left_the_boards(server, capsys):
    note = "reads the reference output through gc.get_objects()"
    marked = {**submission_json(runs=[(11, "done")]), "hacked": True, "hacked_note": note}
    server.reply("GET", "/api/submissions/7/", 200, marked)
    server.reply("GET", "/api/runs/11/", 200, run_json(11))
    assert main(["status", "7"]) == 0
    err = " ".join(capsys.readouterr().err.split())  # the console wraps it
    assert f"taken off the boards by an operator: {note}" in err


def test_a_narrow_terminal_folds_names_never_cuts_them(server, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    run = run_json(11, verdict="RUNTIME_ERROR", hardware="npu-sim-v1-with-a-long-name")
    server.reply("GET", "/api/runs/", 200, {"results": [run], "next": None})
    assert main(["runs"]) == 0
    out = capsys.readouterr().out
    assert "…" not in out and "RUNTI" in out and "ME_ER" in out  # folded over two lines
