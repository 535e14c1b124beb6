"""The `docker` runner: one container per evaluation, from a per-hardware sandbox image
(deploy/sandbox/Dockerfile.{cuda,rocm,cpu}).

`container_config()` is the whole security policy, as the keyword arguments of
`client.containers.create`: no network, read-only root filesystem, size-capped tmpfs /tmp and
/dev/shm, the image's non-root user, every capability dropped, no-new-privileges, pids / memory
(no swap) / CPU-time / file-size limits, no log driver, and only the assigned GPU (an NVIDIA device
request naming that one device; for AMD /dev/kfd and that GPU's render node). CPU-only sandboxes
may run under gVisor (FARM_SANDBOX_RUNTIME=runsc).

The docker SDK is imported on first use only, so the farm does not need it without an engine.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from farm.sandbox.base import Runner, SandboxProcess, SandboxUnavailable
from farm.sandbox.limits import DeviceAssignment, Limits

SANDBOX_UID = 10001  # the `sandbox` user of deploy/sandbox/Dockerfile.*
IMAGE_ENV = {
    "nvidia": "FARM_SANDBOX_IMAGE_CUDA",
    "amd": "FARM_SANDBOX_IMAGE_ROCM",
    None: "FARM_SANDBOX_IMAGE_CPU",
}
DEFAULT_IMAGES = {
    "nvidia": "kernel-farm-sandbox:cuda",
    "amd": "kernel-farm-sandbox:rocm",
    None: "kernel-farm-sandbox:cpu",
}
RUNTIME_ENV = "FARM_SANDBOX_RUNTIME"

CONTAINER_ENV = {
    "HOME": "/tmp/home",
    "TMPDIR": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONNOUSERSITE": "1",
    "TRITON_CACHE_DIR": "/tmp/triton-cache",
    "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor-cache",
}


def image_for(device: DeviceAssignment | None) -> str:
    vendor = device.vendor if device else None
    return os.environ.get(IMAGE_ENV[vendor], DEFAULT_IMAGES[vendor])


def container_config(
    argv: list[str],
    *,
    workdir: Path,
    env: dict[str, str],
    limits: Limits,
    device: DeviceAssignment | None = None,
    ro_binds: Sequence[Path] = (),
    runtime: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments for `client.containers.create` that sandbox `argv`.

    `runtime` (e.g. "runsc" for gVisor) applies to CPU-only sandboxes; with a GPU it is refused.
    """
    from docker.types import LogConfig, Ulimit

    if runtime and device is not None:
        raise SandboxUnavailable(
            f"runtime '{runtime}' is for CPU-only sandboxes",
            hint=f"unset {RUNTIME_ENV} on GPU nodes",
        )
    tmpfs_opts = f"rw,nosuid,nodev,size={limits.tmp_bytes},mode=1777"
    config: dict[str, Any] = {
        "image": image_for(device),
        "command": list(argv),
        "user": f"{SANDBOX_UID}:{SANDBOX_UID}",
        "working_dir": str(workdir),
        "environment": {**CONTAINER_ENV, **env},
        "network_mode": "none",
        "read_only": True,
        "tmpfs": {"/tmp": tmpfs_opts, "/dev/shm": tmpfs_opts},
        "volumes": _volumes(workdir, ro_binds),
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges:true"],
        "pids_limit": limits.pids,
        "mem_limit": limits.memory_bytes,
        "memswap_limit": limits.memory_bytes,
        "ulimits": [
            Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds + 5),
            Ulimit(name="fsize", soft=limits.file_size_bytes, hard=limits.file_size_bytes),
            Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
            Ulimit(name="core", soft=0, hard=0),
        ],
        "ipc_mode": "private",
        "hostname": "sandbox",
        "init": True,
        "stdin_open": True,
        "tty": False,
        "detach": True,
        "log_config": LogConfig(type="none"),
        "labels": {"farm.sandbox": "1"},
    }
    if runtime:
        config["runtime"] = runtime
    config.update(_device_config(device))
    return config


def _volumes(workdir: Path, ro_binds: Sequence[Path]) -> dict[str, dict[str, str]]:
    volumes = {str(p): {"bind": str(p), "mode": "ro"} for p in ro_binds}
    volumes[str(workdir)] = {"bind": str(workdir), "mode": "rw"}
    return volumes


def _device_config(device: DeviceAssignment | None) -> dict[str, Any]:
    """Only the assigned GPU: NVIDIA through one device request, AMD through its device nodes
    (plus the groups that own them, since the container user is not in the host's video group)."""
    if device is None:
        return {}
    if device.vendor == "nvidia":
        from docker.types import DeviceRequest

        request = DeviceRequest(
            driver="nvidia", device_ids=[device.device_id()], capabilities=[["gpu"]]
        )
        return {"device_requests": [request]}
    nodes = device.device_nodes()
    groups = sorted({os.stat(n).st_gid for n in nodes if n.exists()})
    return {"devices": [f"{n}:{n}:rwm" for n in nodes], "group_add": [str(g) for g in groups]}


class DockerRunner(Runner):
    name = "docker"

    def __init__(self, client: Any = None) -> None:
        self.client = client if client is not None else connect()
        self.runtime = os.environ.get(RUNTIME_ENV) or None

    def spawn(
        self,
        argv: list[str],
        *,
        workdir: Path,
        env: dict[str, str],
        limits: Limits,
        device: DeviceAssignment | None = None,
        ro_binds: Sequence[Path] = (),
    ) -> SandboxProcess:
        workdir = Path(workdir).resolve()
        if os.geteuid() == 0:
            os.chown(workdir, SANDBOX_UID, SANDBOX_UID)
        runtime = self.runtime if device is None else None
        config = container_config(
            argv,
            workdir=workdir,
            env=env,
            limits=limits,
            device=device,
            ro_binds=ro_binds,
            runtime=runtime,
        )
        container = self.client.containers.create(**config)
        handle = ContainerHandle(self.client, container)
        return SandboxProcess(
            handle, limits, signal_from_status=True, kill=handle.kill, cleanup=handle.remove
        )


def connect() -> Any:
    """A docker client whose engine answered a ping; raises SandboxUnavailable otherwise."""
    try:
        import docker

        client = docker.from_env(timeout=10)
        client.ping()
    except Exception as exc:  # no SDK, no socket, engine down: all mean "no docker here"
        raise SandboxUnavailable(
            f"no docker engine answers ({exc})", hint="start docker or use bwrap"
        ) from exc
    return client


class ContainerHandle:
    """subprocess.Popen's interface over a created container: stdin goes to the attach socket,
    a thread splits the engine's multiplexed stream into real stdout/stderr pipes."""

    def __init__(self, client: Any, container: Any) -> None:
        self._client = client
        self.container = container
        self.returncode: int | None = None
        self._sock = _raw_socket(
            client.api.attach_socket(
                container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
        )
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        self.stdin = _SocketWriter(self._sock)
        self.stdout = os.fdopen(out_r, "rb", buffering=0)
        self.stderr = os.fdopen(err_r, "rb", buffering=0)
        self._pump = threading.Thread(
            target=demultiplex, args=(self._sock, out_w, err_w), daemon=True
        )
        self._pump.start()
        container.start()
        container.reload()
        self.pid = int(container.attrs.get("State", {}).get("Pid") or 0)

    def poll(self) -> int | None:
        if self.returncode is None:
            self.container.reload()
            state = self.container.attrs.get("State", {})
            if state.get("Status") in ("exited", "dead"):
                self.returncode = int(state.get("ExitCode", -1))
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            try:
                status = self.container.wait(timeout=timeout)
            except Exception as exc:  # requests' ReadTimeout / ConnectionError
                if self.poll() is None:
                    raise subprocess.TimeoutExpired(
                        ["container", self.container.id], timeout or 0
                    ) from exc
                return self.returncode or 0
            self.returncode = int(status.get("StatusCode", -1))
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(Exception):  # already stopped or removed
            self.container.kill()

    def remove(self) -> None:
        with contextlib.suppress(Exception):  # removed already
            self.container.remove(force=True)
        self._sock.close()


def _raw_socket(attached: Any) -> socket.socket:
    """The docker SDK returns a SocketIO wrapper on Unix sockets; we need the socket."""
    return getattr(attached, "_sock", attached)


class _SocketWriter:
    """stdin of the container: writes go to the attach socket; close() half-closes it."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.closed = False

    def write(self, data: bytes) -> int:
        self._sock.sendall(data)
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_WR)


_HEADER = struct.Struct(">BxxxI")  # stream (1 stdout, 2 stderr), 3 pad bytes, payload length


def demultiplex(sock: socket.socket, out_fd: int, err_fd: int) -> None:
    """Copy the engine's multiplexed attach stream into two pipes until it ends; close both."""
    try:
        while header := _recv_exactly(sock, _HEADER.size):
            kind, length = _HEADER.unpack(header)
            payload = _recv_exactly(sock, length)
            target = err_fd if kind == 2 else out_fd
            with contextlib.suppress(BrokenPipeError):  # the reader stopped: keep draining
                _write_all(target, payload)
    finally:
        os.close(out_fd)
        os.close(err_fd)


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    parts, need = [], n
    while need:
        try:
            chunk = sock.recv(need)
        except OSError:
            chunk = b""
        if not chunk:
            return b""
        parts.append(chunk)
        need -= len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
