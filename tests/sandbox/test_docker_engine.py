"""The docker runner against a real engine: the tests start their own `dockerd` (private data
root and socket) where it is installed and they run as root, build the sandbox image locally
with farm.sandbox.host_image (no registry), and run honest and hostile programs through it.
Skipped, with the reason, where dockerd is missing or not root."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from farm.sandbox import Limits, SandboxUnavailable, get_runner
from farm.sandbox.docker_runner import DockerRunner
from tests.sandbox.conftest import run_in

REPO = Path(__file__).resolve().parents[2]
IMAGE = "kernel-farm-sandbox:test-host"
pytestmark = [pytest.mark.isolation, pytest.mark.slow]


@pytest.fixture(scope="module")
def engine() -> Iterator[str]:
    """DOCKER_HOST of a dockerd started for these tests, with the host-env image built."""
    pytest.importorskip("docker")
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        pytest.skip("dockerd is not installed (apt-get install docker.io)")
    if os.geteuid() != 0:
        pytest.skip("starting a docker engine needs root")
    # Short paths: containerd's sockets live under the exec root (a unix socket path is <108 B).
    home = Path(tempfile.mkdtemp(prefix="fd-", dir="/tmp"))
    host = f"unix://{home}/docker.sock"
    log = open(home / "dockerd.log", "wb")  # noqa: SIM115 (closed at teardown)
    proc = subprocess.Popen(
        [
            dockerd,
            f"--data-root={home}/root",
            f"--exec-root={home}/exec",
            f"--pidfile={home}/docker.pid",
            f"--host={host}",
            "--iptables=false",
            "--ip6tables=false",
            "--bridge=none",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        import docker

        deadline = time.monotonic() + 60
        while True:
            try:
                client = docker.DockerClient(base_url=host, timeout=60)
                client.ping()
                break
            except Exception:
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = (home / "dockerd.log").read_text(errors="replace")[-2000:]
                    pytest.skip(f"dockerd did not start here: {tail}")
                time.sleep(0.3)
        from farm.sandbox.host_image import build

        build(client, IMAGE)
        yield host
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def docker_env(engine: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DOCKER_HOST", engine)
    monkeypatch.setenv("FARM_SANDBOX_IMAGE_CPU", IMAGE)
    return engine


@pytest.fixture
def runner(docker_env: str) -> DockerRunner:
    made = get_runner("docker")
    assert isinstance(made, DockerRunner) and made.host_env
    return made


def test_hostile_program_is_contained(runner, tmp_path):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    secret = Path(f"/root/.farm-test-credentials-{os.getpid()}")  # one per test process
    secret.write_text("s3cret")
    secret.chmod(0o600)
    try:
        ran = run_in(
            runner,
            f"""
            import os, socket
            def attempt(fn):
                try:
                    fn(); return "allowed"
                except Exception as exc:
                    return type(exc).__name__
            status = dict(l.split(":\\t", 1) for l in open("/proc/self/status").read().splitlines()
                          if ":\\t" in l)
            print({{
                "net": attempt(lambda: socket.create_connection(("127.0.0.1", {port}), 1)),
                "write_usr": attempt(lambda: open("/usr/farm-probe", "w")),
                "write_root": attempt(lambda: open("/farm-probe", "w")),
                "secret": attempt(lambda: open("{secret}").read()),
                "workdir": attempt(lambda: open("out.txt", "w").write("x")),
                "uid": os.getuid(),
                "cap_eff": status["CapEff"].strip(), "cap_bnd": status["CapBnd"].strip(),
                "no_new_privs": status["NoNewPrivs"].strip(),
                "interfaces": sorted(n for _, n in socket.if_nameindex()),
            }})
            """,
            tmp_path,
        )
        with pytest.raises(TimeoutError):
            listener.accept()  # nothing reached the host's loopback
    finally:
        secret.unlink()
        listener.close()
    assert ran.termination.returncode == 0, ran.stderr.decode()[-2000:]
    seen = eval(ran.out)  # the dict the program printed
    assert seen["net"] != "allowed" and seen["interfaces"] == ["lo"]
    assert seen["write_usr"] == "OSError" and seen["write_root"] == "OSError"
    assert seen["secret"] in ("FileNotFoundError", "PermissionError")
    assert seen["workdir"] == "allowed"  # on the work dir's tmpfs, gone with the program
    assert not (tmp_path / "out.txt").exists() or os.geteuid() != 0
    assert seen["uid"] == 10001 and seen["no_new_privs"] == "1"
    assert int(seen["cap_eff"], 16) == 0 and int(seen["cap_bnd"], 16) == 0


def test_limits_end_hostile_programs(runner, tmp_path):
    forks = run_in(
        runner,
        """
        import os, time
        n = 0
        try:
            while n < 200:
                if os.fork() == 0:
                    time.sleep(30); os._exit(0)
                n += 1
        except OSError:
            pass
        print(n)
        """,
        tmp_path,
        limits=Limits(pids=32, wall_seconds=20),
    )
    assert 0 < int(forks.out) < 32  # the pids cgroup stopped the fork loop

    hog = run_in(
        runner,
        "x = bytearray(1 << 30); print('allocated')",
        tmp_path,
        limits=Limits(memory_bytes=256 << 20, wall_seconds=30),
    )
    assert hog.termination.limit == "memory_bytes" and "allocated" not in hog.out

    started = time.monotonic()
    sleeper = run_in(runner, "import time; time.sleep(60)", tmp_path, limits=Limits(wall_seconds=2))
    assert sleeper.termination.limit == "wall_seconds" and time.monotonic() - started < 20


def test_evaluations_through_the_engine(docker_env, monkeypatch):
    from farm.harness.supervisor import evaluate

    honest = REPO / "tests" / "solutions" / "correct" / "softmax__triton.py"
    doc = evaluate(honest, problem="softmax", device="cpu", mode="test", sandbox="docker").to_json()
    assert doc["verdict"] == "PASSED", doc["reasons"]
    assert doc["environment"]["sandbox"] == "docker"

    # A 12 GiB host-memory hog on a 64x256 softmax: the container's cgroup limit, sized from
    # the workload, ends it and the verdict names the limit.
    hog = REPO / "bench" / "gpu_sandbox_kernels" / "host_memory_hog.py"
    doc = evaluate(
        hog, problem="softmax", device="cpu", mode="test", sandbox="docker", workloads=["small"]
    ).to_json()
    assert doc["verdict"] == "RUNTIME_ERROR"
    assert "MEMORY_LIMIT" in {r["code"] for r in doc["reasons"]}, doc["reasons"]


def test_missing_image_is_one_line_and_auto_falls_back(docker_env, monkeypatch, tmp_path):
    monkeypatch.setenv("FARM_SANDBOX_IMAGE_CPU", "kernel-farm-sandbox:absent")
    with pytest.raises(SandboxUnavailable) as info:
        get_runner("docker")
    assert "\n" not in str(info.value)
    assert "'kernel-farm-sandbox:absent' is not on this docker engine" in str(info.value)
    assert "docker build -f deploy/sandbox/Dockerfile.cpu" in str(info.value)

    try:
        fallback = get_runner("auto")
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap cannot sandbox here either: {exc}")
    assert fallback.name == "bwrap"
    assert fallback.note and "docker is set up but unusable" in fallback.note

    # Through the CLI: one `error:` line that says what to run, exit 2, no traceback.
    source = tmp_path / "k.py"
    source.write_text("def kernel(x):\n    return x.softmax(-1)\n")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "farm", "eval", str(source)),
            *("--problem=softmax", "--device=cpu", "--sandbox=docker", "--json=-"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) <= 2 and lines[0].startswith("error:") and "Traceback" not in done.stderr
    assert "docker build" in done.stderr


def test_dead_engine_is_one_line(monkeypatch, tmp_path):
    pytest.importorskip("docker")
    dead = tmp_path / "dead.sock"
    with socket.socket(socket.AF_UNIX) as s:  # a socket file nobody listens on
        s.bind(str(dead))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{dead}")
    with pytest.raises(SandboxUnavailable) as info:
        get_runner("docker")
    text = str(info.value)
    assert "\n" not in text and f"unix://{dead} does not answer" in text
    assert "systemctl start docker" in text
