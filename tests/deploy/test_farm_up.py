"""`farm up` from a fresh clone: the example kernels are scored through the real local agent
(npu-sim, in the bwrap sandbox) and the boards are read back over HTTP.

First run: `--exit-after-board` on an empty var directory (migrate, suites, users, agents,
submissions, scores, boards printed, everything stopped). Second run: the same command without
it, on the same state: nothing is submitted again, the REST API and the pages show the ranked
boards, the demo token stored in the `local` profile works for `farm submit --profile local`
while the user's own config.json stays as it was, and Ctrl-C stops every process.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
HW = "npu-sim-v1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    from farm.sandbox import SandboxUnavailable, get_runner

    try:
        get_runner("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"needs bubblewrap: {exc}")
    root = tmp_path_factory.mktemp("farm-up")
    subprocess.run(["git", "clone", "-q", str(REPO), str(root / "farm")], check=True)
    return root


def farm_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FARM_", "DJANGO_"))}
    env.pop("DATABASE_URL", None)
    env.pop("CELERY_BROKER_URL", None)
    return {**env, "FARM_HOME": str(root / "home"), "PYTHONPATH": str(root / "farm")}


def farm(root: Path, *args: str, **kw) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "farm", *args],
        cwd=root / "farm",
        env=farm_env(root),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kw,
    )


def processes_in(directory: Path) -> list[int]:
    """Processes whose working directory is `directory` (every process farm up starts is)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if Path(os.readlink(entry / "cwd")) == directory:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture(scope="module")
def first_run(clone):
    port = free_port()
    started = time.monotonic()
    proc = farm(clone, "up", "--exit-after-board", "--port", str(port))
    out, _ = proc.communicate(timeout=420)
    return proc.returncode, out, time.monotonic() - started


def test_first_run_scores_the_examples_and_prints_the_boards(first_run, clone):
    rc, out, seconds = first_run
    assert rc == 0, out[-6000:]
    assert "core-v1/softmax on npu-sim-v1" in out and "core-v1/rmsnorm on npu-sim-v1" in out
    assert "REJECTED" in out
    assert (clone / "farm" / "var" / "farm.sqlite3").is_file()  # the clone's var/, not ours
    local = clone / "home" / "profiles" / "local.json"  # the user's config.json is not written
    assert json.loads(local.read_text())["token"].startswith("fu_")
    assert local.stat().st_mode & 0o077 == 0 and not (clone / "home" / "config.json").exists()
    assert not processes_in(clone / "farm"), "processes left behind"
    print(f"first run: {seconds:.0f} s")


def test_second_run_serves_the_boards_and_stops_on_ctrl_c(first_run, clone):
    assert first_run[0] == 0
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    own = clone / "home" / "config.json"  # a login to a real server: farm up leaves it alone
    own.write_text('{"url": "https://farm.example", "token": "fu_real"}\n')
    own.chmod(0o600)
    proc = farm(clone, "up", "--port", str(port))
    try:
        out = read_until(proc, "serving; press Ctrl-C", timeout_s=240)
        check_boards(url)
        check_submissions(url)
        check_pages(url)
        submit = farm(clone, "submit", str(REPO / "examples" / "vector_add_triton.py"),
                      "--problem", "vector_add", "--hw", HW, "--mode", "test",
                      "--profile", "local")  # fmt: skip
        assert submit.wait(timeout=60) == 0, submit.stdout.read() if submit.stdout else ""
        assert json.loads(own.read_text())["token"] == "fu_real"
    finally:
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=90)
    assert proc.returncode == 0, rest[-4000:]
    assert "farm stopped" in rest
    assert not processes_in(clone / "farm"), "processes left behind after Ctrl-C"
    assert "evaluating" in out


def read_until(proc: subprocess.Popen[str], marker: str, *, timeout_s: float) -> str:
    assert proc.stdout is not None
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        seen.append(line)
        if marker in line:
            return "".join(seen)
    raise AssertionError("farm up did not start serving:\n" + "".join(seen)[-6000:])


def check_boards(url: str) -> None:
    softmax = requests.get(f"{url}/api/boards/core-v1/softmax/{HW}/", timeout=10).json()
    entries = softmax["entries"]
    # the library op (as fast as the eager baseline: 0.5), the online Triton kernel (slower than
    # the library op in npu-sim's cost model), the naive one
    assert [e["user"] for e in entries] == ["bob", "alice", "carol"]
    assert [e["rank"] for e in entries] == [1, 2, 3]
    scores = [e["sol_score"] for e in entries]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]
    rmsnorm = requests.get(f"{url}/api/boards/core-v1/rmsnorm/{HW}/", timeout=10).json()
    assert [e["user"] for e in rmsnorm["entries"]] == ["alice", "bob"]
    for board in (softmax, rmsnorm):  # first place was audited on the other npu-sim node
        top = requests.get(f"{url}/api/runs/{board['entries'][0]['run']}/", timeout=10).json()
        assert top["audit"] == "confirmed", top
        audit = requests.get(f"{url}/api/runs/{top['audit_run']}/", timeout=10).json()
        assert audit["audit_of"] == top["id"] and audit["verdict"] == "PASSED"


def check_submissions(url: str) -> None:
    """Six submissions, once each (the second run sent nothing); mallory's is REJECTED."""
    by_user: dict[str, list[dict]] = {}
    for sid in range(1, 9):
        r = requests.get(f"{url}/api/submissions/{sid}/", timeout=10)
        if r.status_code == 200:
            by_user.setdefault(r.json()["user"], []).append(r.json())
    assert sorted((u, len(s)) for u, s in by_user.items()) == [
        ("alice", 2), ("bob", 2), ("carol", 1), ("mallory", 1)
    ]  # fmt: skip
    (cheat,) = by_user["mallory"]
    assert [r["verdict"] for r in cheat["runs"]] == ["REJECTED"]
    honest = [r for u in ("alice", "bob", "carol") for s in by_user[u] for r in s["runs"]]
    assert {r["verdict"] for r in honest} == {"PASSED"}


def check_pages(url: str) -> None:
    page = requests.get(f"{url}/boards/core-v1/softmax/{HW}/", timeout=10)
    assert page.status_code == 200
    for user in ("alice", "bob", "carol"):
        assert user in page.text
    assert "mallory" not in page.text
    assert requests.get(f"{url}/", timeout=10).status_code == 200
