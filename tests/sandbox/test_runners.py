"""Runner selection, limits, the docker container configuration (against a fake engine) and the
reader-side output cap."""

from __future__ import annotations

import io
import itertools
import os
import socket
import struct
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from farm.sandbox import (
    CappedReader,
    DeviceAssignment,
    Limits,
    Runner,
    RunnerAbsent,
    SandboxUnavailable,
    docker_runner,
    get_runner,
    registry,
)
from farm.sandbox.bwrap import BwrapRunner, mount_args
from farm.sandbox.docker_runner import ContainerHandle, DockerRunner, container_config
from farm.sandbox.process import ProcessRunner

# -- limits and devices -------------------------------------------------------------------


def test_limits_reject_nonsense():
    with pytest.raises(ValueError, match="pids"):
        Limits(pids=0)
    with pytest.raises(ValueError, match="wall_seconds"):
        Limits(wall_seconds=-1)


def test_nvidia_assignment_lists_only_its_own_gpu_node():
    nodes = DeviceAssignment(vendor="nvidia", index=3).device_nodes()
    gpu_nodes = [n for n in nodes if n.name.removeprefix("nvidia").isdigit()]
    assert gpu_nodes == [Path("/dev/nvidia3")]
    assert Path("/dev/nvidiactl") in nodes


def test_amd_assignment_is_kfd_plus_one_render_node():
    assert DeviceAssignment(vendor="amd", index=1).device_nodes() == [
        Path("/dev/kfd"),
        Path("/dev/dri/renderD129"),
    ]
    custom = DeviceAssignment(vendor="amd", index=1, render_node=Path("/dev/dri/renderD140"))
    assert custom.device_nodes()[1] == Path("/dev/dri/renderD140")


def test_unknown_vendor_is_refused():
    with pytest.raises(ValueError, match="vendor"):
        DeviceAssignment(vendor="intel", index=0)  # type: ignore[arg-type]


# -- choosing a runner --------------------------------------------------------------------


def test_unknown_runner_name_says_what_exists():
    with pytest.raises(SandboxUnavailable, match="unknown sandbox runner 'chroot'") as info:
        get_runner("chroot")
    assert "bwrap" in str(info.value)


def test_process_runner_refuses_without_opt_in(monkeypatch):
    monkeypatch.delenv("FARM_ALLOW_UNSANDBOXED", raising=False)
    with pytest.raises(SandboxUnavailable, match="does not isolate"):
        get_runner("process")
    monkeypatch.setenv("FARM_ALLOW_UNSANDBOXED", "true")  # only "1" counts
    with pytest.raises(SandboxUnavailable):
        get_runner("process")


def test_process_runner_runs_with_opt_in_and_clean_env(monkeypatch, tmp_path):
    monkeypatch.setenv("FARM_ALLOW_UNSANDBOXED", "1")
    monkeypatch.setenv("FARM_SANDBOX", "process")
    runner = get_runner()
    assert isinstance(runner, ProcessRunner)
    code = "import os, resource as r; print(sorted(os.environ), r.getrlimit(r.RLIMIT_NPROC))"
    proc = runner.spawn(
        [sys.executable, "-c", code], workdir=tmp_path, env={"A": "1"}, limits=Limits(pids=77)
    )
    with proc:
        out = proc.stdout.read().decode()
        assert proc.wait(timeout=30) == 0
    names, nproc = out.split("] ")
    # Python itself may add LC_CTYPE (PEP 538 locale coercion); nothing else is inherited.
    assert set(eval(names + "]")) <= {"A", "LC_CTYPE"} and "A" in names
    assert nproc.strip() == "(77, 77)"


class Named(Runner):
    def __init__(self, name):
        self.name = name

    def spawn(self, argv, **kwargs):
        raise NotImplementedError


def test_auto_prefers_docker_then_bwrap_then_refuses(monkeypatch, caplog):
    monkeypatch.delenv("FARM_SANDBOX", raising=False)
    made = []

    def fake_make(name, vendor=None):
        made.append((name, vendor))
        if name == "docker":
            raise RunnerAbsent("no docker engine on this node")
        if name == "bwrap" and len(made) > 2:
            raise RunnerAbsent("bubblewrap (bwrap) is not installed")
        return Named(name)

    monkeypatch.setattr(registry, "_make", fake_make)
    runner = get_runner(vendor="nvidia")
    assert runner.name == "bwrap" and runner.note is None  # no docker here: nothing to say
    assert made == [("docker", "nvidia"), ("bwrap", "nvidia")]
    assert not caplog.records
    with pytest.raises(SandboxUnavailable, match="no sandbox is available") as info:
        get_runner()
    assert "docker: no docker engine" in str(info.value) and "bwrap: bubblewrap" in str(info.value)


def test_auto_says_why_it_passed_over_a_broken_docker(monkeypatch, caplog):
    monkeypatch.delenv("FARM_SANDBOX", raising=False)

    def fake_make(name, vendor=None):
        if name == "docker":
            raise SandboxUnavailable(
                "the sandbox image 'kernel-farm-sandbox:cpu' is not on this docker engine",
                hint="build it from the repository root: `docker build ...`",
            )
        return Named(name)

    monkeypatch.setattr(registry, "_make", fake_make)
    runner = get_runner()
    assert runner.name == "bwrap"
    assert "docker is set up but unusable: the sandbox image" in runner.note
    assert runner.note.endswith("; using bwrap")
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "docker build" in caplog.records[0].getMessage()


def test_env_var_chooses_for_auto_but_not_over_an_explicit_name(monkeypatch):
    monkeypatch.setenv("FARM_SANDBOX", "docker")
    monkeypatch.setattr(registry, "_make", lambda name, vendor=None: name)
    assert get_runner() == "docker"
    assert get_runner("bwrap") == "bwrap"


# -- bwrap arguments ----------------------------------------------------------------------


def test_bwrap_binds_only_the_assigned_device_nodes(tmp_path):
    device = DeviceAssignment(vendor="nvidia", index=1, extra_nodes=(Path("/dev/null"),))
    args = mount_args(workdir=tmp_path, device=device, ro_binds=[], limits=Limits())
    pairs = list(itertools.pairwise(args))
    assert ("--dev-bind", "/dev/null") in pairs
    assert ("--bind", str(tmp_path)) in pairs
    assert not any(a == "--bind" and b != str(tmp_path) for a, b in pairs)  # one writable path
    assert "/dev/nvidia0" not in args


def test_bwrap_exposes_the_farm_package_not_the_repository(tmp_path):
    args = mount_args(workdir=tmp_path, device=None, ro_binds=[], limits=Limits())
    ro = [b for a, b in itertools.pairwise(args) if a == "--ro-bind"]
    farm_dir = str(Path(__file__).resolve().parents[2] / "farm")
    assert farm_dir in ro
    assert str(Path(farm_dir).parent) not in ro
    assert "/etc" not in ro and "/root" not in ro and "/home" not in ro


# -- docker configuration against a fake engine -------------------------------------------


def config(**kwargs):
    pytest.importorskip("docker")
    base = {"workdir": Path("/srv/run/1"), "env": {"FARM_X": "1"}, "limits": Limits()}
    return container_config(["python", "-m", "farm.harness.worker"], **{**base, **kwargs})


def test_docker_config_locks_the_container_down():
    c = config()
    assert c["network_mode"] == "none"
    assert c["read_only"] is True
    assert c["cap_drop"] == ["ALL"]
    assert c["security_opt"] == ["no-new-privileges:true"]
    assert c["user"] != "root" and not c["user"].startswith("0")
    assert c["pids_limit"] == Limits().pids
    assert c["mem_limit"] == c["memswap_limit"] == Limits().memory_bytes
    assert set(c["tmpfs"]) == {"/tmp", "/dev/shm"} and "size=" in c["tmpfs"]["/tmp"]
    assert c["volumes"] == {"/srv/run/1": {"bind": "/srv/run/1", "mode": "rw"}}
    assert c["environment"]["FARM_X"] == "1"
    assert {u["Name"]: u["Soft"] for u in c["ulimits"]}["cpu"] == Limits().cpu_seconds
    assert c["log_config"]["Type"] == "none"
    assert c["image"] == "kernel-farm-sandbox:cpu"
    assert "runtime" not in c and "device_requests" not in c and "devices" not in c


def test_docker_nvidia_gets_exactly_one_device():
    c = config(device=DeviceAssignment(vendor="nvidia", index=2, uuid="GPU-abc"))
    (request,) = c["device_requests"]
    assert request["DeviceIDs"] == ["GPU-abc"] and request["Capabilities"] == [["gpu"]]
    assert request.get("Count", 0) == 0  # not "all GPUs"
    assert c["image"] == "kernel-farm-sandbox:cuda"


def test_docker_amd_gets_kfd_and_one_render_node():
    c = config(device=DeviceAssignment(vendor="amd", index=0))
    assert c["devices"] == ["/dev/kfd:/dev/kfd:rwm", "/dev/dri/renderD128:/dev/dri/renderD128:rwm"]
    assert "device_requests" not in c


def test_docker_gvisor_only_without_gpu():
    assert config(runtime="runsc")["runtime"] == "runsc"
    with pytest.raises(SandboxUnavailable, match="CPU-only"):
        config(runtime="runsc", device=DeviceAssignment(vendor="nvidia", index=0))


def test_docker_image_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("FARM_SANDBOX_IMAGE_CPU", "registry.local/sandbox:cpu-7")
    assert config()["image"] == "registry.local/sandbox:cpu-7"


class FakeContainer:
    def __init__(self, kwargs):
        self.kwargs = kwargs
        self.id = "c0ffee"
        self.attrs = {"State": {"Pid": 4242, "Status": "running"}}
        self.killed = self.removed = False
        self.exit = threading.Event()

    def start(self):
        pass

    def reload(self):
        pass

    def wait(self, timeout=None):
        if not self.exit.wait(timeout):
            raise TimeoutError("read timed out")
        return {"StatusCode": 137 if self.killed else 0}

    def kill(self):
        self.killed = True
        self.exit.set()

    def remove(self, force=False):
        self.removed = True


class FakeClient:
    """Records what the runner asks of the engine; the attach socket is one end of a pair."""

    def __init__(self):
        self.created = []
        self.engine_side, runner_side = socket.socketpair()
        self.api = SimpleNamespace(attach_socket=lambda cid, params: runner_side)
        self.containers = SimpleNamespace(create=self._create)
        self.images = SimpleNamespace(get=lambda name: SimpleNamespace(tags=[name]))

    def _create(self, **kwargs):
        self.created.append(FakeContainer(kwargs))
        return self.created[-1]


def frame(stream: int, payload: bytes) -> bytes:
    return struct.pack(">BxxxI", stream, len(payload)) + payload


def test_docker_runner_spawns_and_demultiplexes(tmp_path, monkeypatch):
    pytest.importorskip("docker")
    monkeypatch.setattr(os, "chown", lambda *a: None)
    client = FakeClient()
    runner = DockerRunner(client=client)
    proc = runner.spawn(["python", "x.py"], workdir=tmp_path, env={}, limits=Limits())
    (container,) = client.created
    assert container.kwargs["network_mode"] == "none"
    assert proc.pid == 4242

    proc.stdin.write(b"request")
    assert client.engine_side.recv(7) == b"request"
    client.engine_side.sendall(frame(1, b"out-1 ") + frame(2, b"err") + frame(1, b"out-2"))
    client.engine_side.close()
    assert proc.stdout.read() == b"out-1 out-2"
    assert proc.stderr.read() == b"err"
    proc.kill()
    assert proc.wait(timeout=5) == 137
    assert proc.termination().signal == 9
    assert container.removed


def test_container_wait_timeout_is_subprocess_timeout(monkeypatch):
    pytest.importorskip("docker")
    import subprocess

    client = FakeClient()
    container = client.containers.create()
    handle = ContainerHandle(client, container)
    with pytest.raises(subprocess.TimeoutExpired):
        handle.wait(timeout=0.05)
    handle.kill()
    assert handle.wait() == 137
    handle.remove()


def test_docker_absent_or_dead_engine_is_one_line(monkeypatch, tmp_path):
    docker = pytest.importorskip("docker")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.setattr(docker_runner, "DEFAULT_SOCKET", tmp_path / "docker.sock")
    with pytest.raises(RunnerAbsent, match="no docker engine on this node"):
        docker_runner.connect()

    def no_answer(**kwargs):
        raise docker.errors.DockerException(
            "Error while fetching server API version: ('Connection aborted.',\n"
            "  ConnectionRefusedError(111, 'Connection refused'))"
        )

    monkeypatch.setenv("DOCKER_HOST", "unix:///run/dead.sock")
    monkeypatch.setattr(docker, "from_env", no_answer)
    with pytest.raises(SandboxUnavailable) as info:
        docker_runner.connect()
    assert not isinstance(info.value, RunnerAbsent)
    text = str(info.value)
    assert "\n" not in text and "unix:///run/dead.sock does not answer" in text
    assert "Connection refused" in text and "systemctl start docker" in text


def test_docker_missing_image_names_the_build_command(monkeypatch):
    docker = pytest.importorskip("docker")
    monkeypatch.delenv("FARM_SANDBOX_IMAGE_CUDA", raising=False)
    client = FakeClient()

    def missing(name):
        raise docker.errors.ImageNotFound(f"No such image: {name}")

    client.images.get = missing
    with pytest.raises(SandboxUnavailable) as info:
        DockerRunner(client=client, vendor="nvidia")
    assert str(info.value) == (
        "the sandbox image 'kernel-farm-sandbox:cuda' is not on this docker engine; build it from "
        "the repository root: `docker build -f deploy/sandbox/Dockerfile.cuda -t "
        "kernel-farm-sandbox:cuda .`, or one that runs this node's own software: `python -m "
        "farm.sandbox.host_image --vendor nvidia` (or name another image with "
        "FARM_SANDBOX_IMAGE_CUDA)"
    )


# -- the output cap -----------------------------------------------------------------------


def test_capped_reader_stops_at_the_cap_and_calls_back():
    hits = []
    reader = CappedReader(io.BytesIO(b"a" * 100), 40, lambda: hits.append(1))
    assert reader.read(30) == b"a" * 30
    assert reader.read(30) == b"a" * 10
    assert reader.read(30) == b""
    assert reader.exceeded and hits == [1]


def test_capped_reader_under_the_cap_is_transparent():
    reader = CappedReader(io.BytesIO(b"line1\nline2\n"), 1000, lambda: None)
    assert reader.readline() == b"line1\n"
    assert reader.readexactly(3) == b"lin"
    with pytest.raises(EOFError):
        reader.readexactly(10)
    assert not reader.exceeded


def test_bwrap_runner_reports_missing_bwrap(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        BwrapRunner()
