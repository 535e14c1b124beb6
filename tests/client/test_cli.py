"""`farm login|submit|status|runs|board` through farm.cli.main, against the stub server."""

from __future__ import annotations

import stat

import pytest

from farm.cli import main
from farm.client.config import config_path
from tests.client.conftest import run_json, submission_json


@pytest.fixture
def server(stub, monkeypatch):
    monkeypatch.setenv("FARM_URL", stub.url)
    monkeypatch.setenv("FARM_TOKEN", "fu_test")
    return stub


def kernel_file(tmp_path, header: str = "") -> str:
    path = tmp_path / "k.py"
    path.write_text(header + "def kernel(x):\n    return x.softmax(-1)\n")
    return str(path)


def test_header_directives_stand_in_for_flags(server, tmp_path):
    server.reply("POST", "/api/submissions/", 201, submission_json())
    header = "#!farm problem=softmax hw=nvidia-h100,npu-sim-v1 mode=test\n"
    assert main(["submit", kernel_file(tmp_path, header)]) == 0
    body = server.requests[0]["body"]
    assert (body["problem"], body["hardware"], body["mode"]) == (
        "softmax",
        ["nvidia-h100", "npu-sim-v1"],
        "test",
    )
    assert body["source"].startswith("#!farm") and body["filename"] == "k.py"


def test_flags_override_the_header(server, tmp_path):
    server.reply("POST", "/api/submissions/", 201, submission_json())
    header = "#!farm problem=softmax hw=nvidia-h100\n"
    assert main(["submit", kernel_file(tmp_path, header), "--hw", "npu-sim-v1"]) == 0
    assert server.requests[0]["body"]["hardware"] == ["npu-sim-v1"]


def test_missing_problem_is_bad_input(server, tmp_path, capsys):
    assert main(["submit", kernel_file(tmp_path), "--hw", "npu-sim-v1"]) == 2
    assert "--problem" in capsys.readouterr().err and not server.requests


def test_unknown_directive_is_bad_input(server, tmp_path, capsys):
    assert main(["submit", kernel_file(tmp_path, "#!farm problme=softmax\n")]) == 2
    assert "unknown #!farm key 'problme'" in capsys.readouterr().err


def test_wait_shows_the_result_table(server, tmp_path, capsys):
    server.reply("POST", "/api/submissions/", 201, submission_json())
    server.reply("GET", "/api/submissions/7/", 200, submission_json(runs=[(11, "done")]))
    server.reply("GET", "/api/runs/11/", 200, run_json(11))
    args = ["submit", kernel_file(tmp_path), "--problem", "softmax", "--hw", "npu-sim-v1"]
    assert main([*args, "--wait"]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and "0.610" in out and "small" in out


def test_a_run_failed_in_the_farm_exits_1(server, tmp_path):
    server.reply("POST", "/api/submissions/", 201, submission_json())
    server.reply("GET", "/api/submissions/7/", 200, submission_json(runs=[(11, "failed")]))
    server.reply("GET", "/api/runs/11/", 200, run_json(11, state="failed", verdict=None))
    args = ["submit", kernel_file(tmp_path), "--problem", "softmax", "--hw", "npu-sim-v1"]
    assert main([*args, "--wait"]) == 1


def test_wait_timeout_exits_4(server, tmp_path, capsys):
    server.reply("POST", "/api/submissions/", 201, submission_json())
    server.reply("GET", "/api/submissions/7/", 200, submission_json(runs=[(11, "running")]))
    args = ["submit", kernel_file(tmp_path), "--problem", "softmax", "--hw", "npu-sim-v1"]
    assert main([*args, "--wait", "--timeout", "0.3"]) == 4
    assert "unfinished" in capsys.readouterr().err


def test_server_refusal_exits_3_with_its_message(server, tmp_path, capsys):
    server.reply("POST", "/api/submissions/", 403, {"detail": "your account is suspended"})
    args = ["submit", kernel_file(tmp_path), "--problem", "softmax", "--hw", "npu-sim-v1"]
    assert main(args) == 3
    assert "error: your account is suspended" in capsys.readouterr().err


def test_server_validation_exits_2(server, tmp_path, capsys):
    server.reply("POST", "/api/submissions/", 400, {"hardware": ["unknown class 'npu-sim-v9'"]})
    args = ["submit", kernel_file(tmp_path), "--problem", "softmax", "--hw", "npu-sim-v9"]
    assert main(args) == 2
    assert "hardware: unknown class 'npu-sim-v9'" in capsys.readouterr().err


def test_status_runs_and_board(server, capsys):
    server.reply("GET", "/api/submissions/7/", 200, submission_json(runs=[(11, "done")]))
    server.reply("GET", "/api/runs/11/", 200, run_json(11))
    assert main(["status", "7"]) == 0
    assert "PASSED" in capsys.readouterr().out
    server.reply("GET", "/api/runs/", 200, {"next": None, "results": [run_json(11)]})
    assert main(["runs", "--hw", "npu-sim-v1"]) == 0
    assert server.requests[-1]["query"] == "hardware=npu-sim-v1"
    board = {
        "suite": "core-v1",
        "problem": "softmax",
        "hardware": "npu-sim-v1",
        "entries": [{"rank": 1, "user": "ada", "submission": 7, "run": 11, "sol_score": 0.9}],
    }
    server.reply("GET", "/api/boards/core-v1/softmax/npu-sim-v1/", 200, board)
    assert main(["board", "softmax", "--hw", "npu-sim-v1"]) == 0
    assert "ada" in capsys.readouterr().out


def test_login_checks_and_stores_the_token_0600(stub, tmp_path):
    stub.reply("GET", "/api/tokens/", 200, [])
    assert main(["login", "--url", stub.url, "--token", "fu_abc"]) == 0
    assert stub.requests[0]["auth"] == "Bearer fu_abc"
    assert stat.S_IMODE(config_path().stat().st_mode) == 0o600
    stub.reply("POST", "/api/submissions/", 201, submission_json())
    args = ["submit", kernel_file(tmp_path), "--problem", "softmax", "--hw", "npu-sim-v1"]
    assert main(args) == 0
    assert stub.requests[-1]["auth"] == "Bearer fu_abc"


def test_login_with_a_bad_token_stores_nothing(stub):
    stub.reply("GET", "/api/tokens/", 401, {"detail": "invalid or revoked API token"})
    assert main(["login", "--url", stub.url, "--token", "fu_bad"]) == 3
    assert not config_path().exists()


@pytest.mark.parametrize(("verdict", "code"), [("INCORRECT", 5), ("REJECTED", 6)])
def test_wait_exit_code_reflects_the_verdict(server, tmp_path, verdict, code):
    server.reply("POST", "/api/submissions/", 201, submission_json())
    server.reply("GET", "/api/submissions/7/", 200, submission_json(runs=[(11, "done")]))
    server.reply("GET", "/api/runs/11/", 200, run_json(11, verdict=verdict))
    args = ["submit", kernel_file(tmp_path), "--problem", "softmax", "--hw", "npu-sim-v1"]
    assert main([*args, "--wait"]) == code


def test_submit_prints_the_servers_warnings(server, tmp_path, capsys):
    warning = "no node serves nvidia-b200 right now (this farm has no node for it)"
    server.reply("POST", "/api/submissions/", 201, {**submission_json(), "warnings": [warning]})
    args = ["submit", kernel_file(tmp_path), "--problem", "softmax", "--hw", "nvidia-b200"]
    assert main(args) == 0
    assert f"warning: {warning}" in capsys.readouterr().err.replace("\n", " ")


def test_html_error_pages_become_one_line(server, tmp_path, capsys):
    page = b"<!doctype html><html><head><title>Bad Request (400)</title></head><body>" + (
        b"<p>x</p>" * 500
    )
    server.reply("POST", "/api/submissions/", 400, page)
    args = ["submit", kernel_file(tmp_path), "--problem", "softmax", "--hw", "npu-sim-v1"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "error: HTTP 400 Bad Request: Bad Request (400)" in err and "<" not in err
    server.routes.clear()
    server.reply("POST", "/api/submissions/", 413, {"detail": "the request body is 50.0 MiB"})
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "error: the request body is 50.0 MiB" in err and "one source file" in err


def test_login_without_a_terminal_says_which_flag(stub, capsys, monkeypatch):
    import base64
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["login", "--url", stub.url, "--username", "ada"]) == 2
    assert "--password-stdin" in capsys.readouterr().err
    assert main(["login", "--url", stub.url]) == 2
    stub.reply("POST", "/api/tokens/", 201, {"key": "fu_new", "name": "cli"})
    stub.reply("GET", "/api/tokens/", 200, [])
    monkeypatch.setattr("sys.stdin", io.StringIO("s3cret\n"))
    assert main(["login", "--url", stub.url, "--username", "ada", "--password-stdin"]) == 0
    assert stub.requests[0]["auth"] == "Basic " + base64.b64encode(b"ada:s3cret").decode()


def test_a_traceback_every_workload_raised_is_shown_once(server, capsys):
    run = run_json(11, verdict="RUNTIME_ERROR")
    trace = 'Traceback (most recent call last):\n  File "k.py", line 2\nValueError: boom\n'
    run["result"]["document"]["reasons"] = [
        {"code": "RUNTIME_ERROR", "detail": trace, "workload": w} for w in ("small", "big")
    ]
    server.reply("GET", "/api/submissions/7/", 200, submission_json(runs=[(11, "done")]))
    server.reply("GET", "/api/runs/11/", 200, run)
    assert main(["status", "7"]) == 0
    out = capsys.readouterr().out
    assert out.count("ValueError: boom") == 1 and "RUNTIME_ERROR [small, big]:" in out
