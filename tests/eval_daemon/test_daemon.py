"""The warm evaluation daemon (farm.eval_daemon) as `farm eval` and `farm pool` use it: started,
serving, stopped; a stale socket; a daemon that dies falls back to a cold evaluation; the same
verdict warm and cold. The daemons here are real processes on the configured sandbox."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from farm import cli, cli_eval
from farm.eval_daemon import client
from farm.eval_daemon.wire import socket_path

HONEST = "def kernel(a, b):\n    return a + b\n"
WRONG = "def kernel(a, b):\n    return a - b\n"
EVAL = ["--problem", "vector_add", "--workload", "small-4k", "--mode", "test"]


def _short_home() -> Path:
    # a unix socket's path must stay under 108 bytes: pytest's tmp_path can be longer
    return Path(tempfile.mkdtemp(prefix="fh-", dir="/tmp"))


@pytest.fixture(scope="module")
def warm_home() -> Iterator[Path]:
    """A FARM_HOME with a daemon running in it (shared by this module's warm tests)."""
    home = _short_home()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FARM_HOME", str(home))
        client.start(device="cpu", sandbox="auto", idle_exit_s=900)
        yield home
        client.stop()
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def own_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A FARM_HOME of this test alone; a daemon left in it is stopped."""
    home = _short_home()
    monkeypatch.setenv("FARM_HOME", str(home))
    yield home
    client.stop()
    shutil.rmtree(home, ignore_errors=True)


def _kernel(directory: Path, text: str) -> Path:
    path = directory / "kernel.py"
    path.write_text(text)
    return path


def _eval(path: Path, *extra: str, out: Path) -> tuple[int, dict]:
    code = cli.main(["eval", str(path), *EVAL, *extra, "--json", str(out)])
    return code, json.loads(out.read_text())


def test_started_daemon_is_private_and_visible(
    warm_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FARM_HOME", str(warm_home))
    sock = socket_path()
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    assert cli.main(["pool", "status"]) == 0
    shown = capsys.readouterr().out
    status = client.status()
    assert status is not None and f"pid {status.pid}" in shown
    assert "cpu/auto" in shown and str(sock) in shown


@pytest.mark.parametrize(("source", "verdict"), [(HONEST, "PASSED"), (WRONG, "INCORRECT")])
def test_same_verdict_warm_and_cold(
    warm_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    source: str,
    verdict: str,
) -> None:
    monkeypatch.setenv("FARM_HOME", str(warm_home))
    path = _kernel(tmp_path, source)
    served = client.status().served  # type: ignore[union-attr]
    warm_code, warm = _eval(path, out=tmp_path / "warm.json")
    assert client.status().served == served + 1  # type: ignore[union-attr]  the daemon did it
    cold_code, cold = _eval(path, "--cold", out=tmp_path / "cold.json")
    assert client.status().served == served + 1  # type: ignore[union-attr]  and not this one
    assert warm["verdict"] == cold["verdict"] == verdict
    assert warm_code == cold_code
    assert [w["status"] for w in warm["workloads"]] == [w["status"] for w in cold["workloads"]]
    assert "evaluating cold" not in capsys.readouterr().err


def test_daemon_answers_a_bad_problem_as_the_cold_command(
    warm_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> None:
    monkeypatch.setenv("FARM_HOME", str(warm_home))
    path = _kernel(tmp_path, HONEST)
    code = cli.main(["eval", str(path), "--problem", "vector_ad", "--mode", "test"])
    err = capsys.readouterr().err
    assert code == 2 and "vector_ad" in err and "vector_add" in err  # the did-you-mean hint
    assert "evaluating cold" not in err


def test_other_settings_are_served_cold(
    warm_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> None:
    monkeypatch.setenv("FARM_HOME", str(warm_home))
    monkeypatch.setenv("FARM_BASELINE_CACHE_TTL_S", "5")  # a setting the daemon did not start with
    args = cli.build_parser().parse_args(["eval", str(_kernel(tmp_path, HONEST)), *EVAL])
    assert cli_eval.warm_document(args) is None
    assert "other FARM_ settings" in capsys.readouterr().err


def test_start_serve_stop(own_home: Path, tmp_path: Path, capsys) -> None:
    assert cli.main(["pool", "start", "--idle-exit-s", "600"]) == 0
    status = client.status()
    assert status is not None and status.devices == ["cpu/auto"]
    code, doc = _eval(_kernel(tmp_path, HONEST), out=tmp_path / "r.json")
    assert code == 0 and doc["verdict"] == "PASSED"
    assert cli.main(["pool", "stop"]) == 0
    assert f"stopped the daemon (pid {status.pid})" in capsys.readouterr().out
    assert client.status() is None and not socket_path().exists()
    _wait_gone(status.pid)


def test_sigterm_stops_the_daemon_and_an_idle_one_exits_by_itself(own_home: Path) -> None:
    first = client.start(device="cpu", sandbox="auto", idle_exit_s=600)
    os.kill(first.pid, signal.SIGTERM)
    _wait_gone(first.pid)
    assert not socket_path().exists()

    idle = client.start(device="cpu", sandbox="auto", idle_exit_s=2)
    assert idle.pid != first.pid
    _wait_gone(idle.pid)
    assert client.status() is None and not socket_path().exists()


def test_killed_daemon_falls_back_cold_and_its_stale_socket_is_replaced(
    own_home: Path, tmp_path: Path, capsys
) -> None:
    first = client.start(device="cpu", sandbox="auto", idle_exit_s=600)
    os.kill(first.pid, signal.SIGKILL)
    _wait_gone(first.pid)
    assert socket_path().exists()  # left behind: nobody listens on it

    code, doc = _eval(_kernel(tmp_path, HONEST), out=tmp_path / "r.json")
    assert code == 0 and doc["verdict"] == "PASSED"
    assert "note: evaluating cold" in capsys.readouterr().err

    assert cli.main(["pool", "status"]) == 0
    assert "a dead daemon's socket is left" in capsys.readouterr().out
    second = client.start(device="cpu", sandbox="auto", idle_exit_s=600)
    assert second.pid != first.pid and client.status() is not None


def test_a_suite_changed_on_disk_is_evaluated_cold_and_stops_the_daemon(
    own_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The harness keeps a suite (and its references) once loaded; a daemon must not judge
    against the old files."""
    from farm.suite.loader import find_suite

    suite = tmp_path / "core-v1"
    shutil.copytree(find_suite("core-v1"), suite)
    daemon = client.start(device="cpu", sandbox="auto", idle_exit_s=600)
    kernel = _kernel(tmp_path, HONEST)
    code, doc = _eval(kernel, "--suite", str(suite), out=tmp_path / "warm.json")
    assert code == 0 and client.status().served == 1  # type: ignore[union-attr]
    problem_file = suite / "vector_add" / "problem.yaml"
    os.utime(problem_file, ns=(time.time_ns(), time.time_ns() + 10**9))

    code, doc = _eval(kernel, "--suite", str(suite), out=tmp_path / "cold.json")
    assert code == 0 and doc["verdict"] == "PASSED"
    err = capsys.readouterr().err
    assert "evaluating cold" in err and "changed on disk" in err
    _wait_gone(daemon.pid)


def test_a_daemon_of_other_code_stops_and_the_file_is_evaluated_cold(
    own_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    daemon = client.start(device="cpu", sandbox="auto", idle_exit_s=600)
    monkeypatch.setattr(cli_eval, "code_stamp", lambda: "edited")  # the farm changed on disk
    args = cli.build_parser().parse_args(["eval", str(_kernel(tmp_path, HONEST)), *EVAL])
    assert cli_eval.warm_document(args) is None
    assert "the farm's code changed since the daemon started" in capsys.readouterr().err
    _wait_gone(daemon.pid)


def test_daemon_dying_mid_request_falls_back_cold(
    own_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A daemon that reads the request and goes away without a reply: the client says so and
    evaluates cold (here: `warm_document` gives None, the cold command runs)."""
    socket_path().parent.mkdir(parents=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(socket_path()))
    listener.listen(1)

    def die_on_first_request() -> None:
        conn, _ = listener.accept()
        conn.recv(1 << 16)
        conn.close()

    thread = threading.Thread(target=die_on_first_request)
    thread.start()
    args = cli.build_parser().parse_args(["eval", str(_kernel(tmp_path, HONEST)), *EVAL])
    assert cli_eval.warm_document(args) is None
    thread.join(timeout=10)
    listener.close()
    assert "note: evaluating cold: the daemon stopped answering" in capsys.readouterr().err


def test_no_daemon_is_cold_without_a_note(own_home: Path, tmp_path: Path, capsys) -> None:
    args = cli.build_parser().parse_args(["eval", str(_kernel(tmp_path, HONEST)), *EVAL])
    assert cli_eval.warm_document(args) is None
    assert capsys.readouterr().err == ""
    assert cli.main(["pool", "status"]) == 0
    assert capsys.readouterr().out.strip() == "no warm evaluation daemon"


def _wait_gone(pid: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if _zombie(pid):
            return
        time.sleep(0.1)
    raise AssertionError(f"daemon {pid} still running after {timeout} s")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True
