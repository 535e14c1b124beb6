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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from farm.config import SANDBOX_IMAGE_PREFIX, node_settings
from farm.hardware import kinds
from farm.sandbox.base import Runner, RunnerAbsent, SandboxProcess, SandboxUnavailable
from farm.sandbox.limits import DeviceAssignment, Limits, Vendor
from farm.sandbox.workdir import capped_workdir

SANDBOX_UID = 10001  # the `sandbox` user of deploy/sandbox/Dockerfile.* and host_image
HOST_ENV_LABEL = "farm.sandbox.host-env"  # "1": the image runs the node's software, bound in
# Each device kind's image (farm.hardware.kinds), by the GPU vendor a runner is made for (None:
# the non-GPU kinds): deploy/sandbox/Dockerfile.<image>, kernel-farm-sandbox:<image>, and the
# variable FARM_SANDBOX_IMAGE_<IMAGE> that names another.
DOCKERFILES: dict[str | None, str] = {k.gpu_vendor: k.image for k in kinds.all_kinds()}
IMAGE_ENV = {v: f"{SANDBOX_IMAGE_PREFIX}{image.upper()}" for v, image in DOCKERFILES.items()}
DEFAULT_IMAGES = {v: f"kernel-farm-sandbox:{image}" for v, image in DOCKERFILES.items()}
DEFAULT_SOCKET = Path("/var/run/docker.sock")
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
    return image_of(device.vendor if device else None)


def image_of(vendor: Vendor | None) -> str:
    """The sandbox image for sandboxes of `vendor`'s GPUs (None: CPU and npu-sim)."""
    return node_settings().sandbox_images.get(DOCKERFILES[vendor]) or DEFAULT_IMAGES[vendor]


def build_command(vendor: Vendor | None) -> str:
    """The command that builds the sandbox image for `vendor` from the repository root."""
    dockerfile = f"deploy/sandbox/Dockerfile.{DOCKERFILES[vendor]}"
    return f"docker build -f {dockerfile} -t {image_of(vendor)} ."


def container_config(
    argv: list[str],
    *,
    workdir: Path,
    env: dict[str, str],
    limits: Limits,
    device: DeviceAssignment | None = None,
    ro_binds: Sequence[Path] = (),
    runtime: str | None = None,
    host_env: bool = False,
) -> dict[str, Any]:
    """Keyword arguments for `client.containers.create` that sandbox `argv`.

    `runtime` (e.g. "runsc" for gVisor) applies to CPU-only sandboxes; with a GPU it is refused.
    `host_env`: the image is a farm.sandbox.host_image one, so the node's system directories,
    Python environment, farm package and toolchain are bound in read-only (what bwrap binds).
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
        "volumes": _volumes(workdir, [*_host_paths(device, host_env), *ro_binds]),
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


def _host_paths(device: DeviceAssignment | None, host_env: bool) -> list[Path]:
    if not host_env:
        return []
    from farm.sandbox.toolchain import host_root, python_paths

    root = host_root()
    return [*root.binds, *root.etc_files, *python_paths(device.vendor if device else None)]


def _volumes(workdir: Path, ro_binds: Sequence[Path]) -> dict[str, dict[str, str]]:
    volumes = {str(p): {"bind": str(p), "mode": "ro"} for p in ro_binds}
    volumes[str(workdir)] = {"bind": str(workdir), "mode": "rw"}
    return volumes


def _device_config(device: DeviceAssignment | None) -> dict[str, Any]:
    """Only the assigned GPU: NVIDIA through one device request, AMD through its device nodes
    (plus the groups that own them, since the container user is not in the host's video group)."""
    if device is None:
        return {}
    driver = kinds.gpu_backend(device.vendor).CONTAINER_DRIVER
    if driver is not None:
        from docker.types import DeviceRequest

        request = DeviceRequest(
            driver=driver, device_ids=[device.device_id()], capabilities=[["gpu"]]
        )
        return {"device_requests": [request]}
    nodes = device.device_nodes()
    groups = sorted({os.stat(n).st_gid for n in nodes if n.exists()})
    return {"devices": [f"{n}:{n}:rwm" for n in nodes], "group_add": [str(g) for g in groups]}


class DockerRunner(Runner):
    name = "docker"

    def __init__(self, client: Any = None, *, vendor: Vendor | None = None) -> None:
        """A runner on an engine that answers and holds the sandbox image of `vendor`'s GPUs
        (None: the CPU image); raises SandboxUnavailable saying what to run otherwise."""
        self.client = client if client is not None else connect()
        self.runtime = node_settings().sandbox_runtime
        self.host_env = require_image(self.client, vendor)

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
        unmount = capped_workdir(workdir, limits, uid=SANDBOX_UID, gid=SANDBOX_UID)
        try:
            return self._start(argv, workdir, env, limits, device, ro_binds, unmount)
        except BaseException:
            if unmount:
                unmount()
            raise

    def _start(
        self,
        argv: list[str],
        workdir: Path,
        env: dict[str, str],
        limits: Limits,
        device: DeviceAssignment | None,
        ro_binds: Sequence[Path],
        unmount: Callable[[], None] | None,
    ) -> SandboxProcess:
        runtime = self.runtime if device is None else None
        config = container_config(
            argv,
            workdir=workdir,
            env=env,
            limits=limits,
            device=device,
            ro_binds=ro_binds,
            runtime=runtime,
            host_env=self.host_env,
        )
        try:
            container = self.client.containers.create(**config)
        except Exception as exc:  # the SDK's ImageNotFound / APIError / connection errors
            vendor = device.vendor if device else None
            raise _unusable(exc, vendor) from None
        try:
            handle = ContainerHandle(self.client, container)
        except Exception as exc:  # the engine could not start it (runtime, mounts, devices)
            with contextlib.suppress(Exception):
                container.remove(force=True)
            raise _unusable(exc, device.vendor if device else None) from None

        def cleanup() -> None:
            handle.remove()
            if unmount:
                unmount()

        return SandboxProcess(
            handle, limits, signal_from_status=True, kill=handle.kill, cleanup=cleanup
        )


def connect() -> Any:
    """A docker client whose engine answered a ping. Raises RunnerAbsent where no engine is set
    up (no SDK, no socket, DOCKER_HOST unset) and SandboxUnavailable where one is set up but does
    not answer."""
    try:
        import docker
    except ImportError:
        raise RunnerAbsent("the docker SDK is not installed", hint="pip install docker") from None
    where = node_settings().docker_host
    if not where:
        if not DEFAULT_SOCKET.exists():
            raise RunnerAbsent(
                f"no docker engine on this node ({DEFAULT_SOCKET} is missing, DOCKER_HOST unset)",
                hint="install and start docker, or use bwrap",
            )
        where = f"unix://{DEFAULT_SOCKET}"
    try:
        client = docker.from_env(timeout=10)
        client.ping()
    except Exception as exc:  # connection refused, socket dead, TLS, timeout
        raise SandboxUnavailable(
            f"the docker engine at {where} does not answer ({_cause(exc)})",
            hint="start it (`systemctl start docker`, or `dockerd &`), "
            "or choose bwrap (FARM_SANDBOX=bwrap)",
        ) from None
    return client


def require_image(client: Any, vendor: Vendor | None) -> bool:
    """Whether the engine's sandbox image for `vendor` is a host-env one (farm.sandbox.host_image);
    raises SandboxUnavailable, naming the build command, when the engine lacks the image."""
    try:
        image = client.images.get(image_of(vendor))
    except Exception as exc:
        raise _unusable(exc, vendor) from None
    return (getattr(image, "labels", None) or {}).get(HOST_ENV_LABEL) == "1"


def _unusable(exc: Exception, vendor: Vendor | None) -> SandboxUnavailable:
    """One line for what the engine said: a missing image names the command that builds it."""
    image = image_of(vendor)
    if type(exc).__name__ == "ImageNotFound":
        return SandboxUnavailable(
            f"the sandbox image '{image}' is not on this docker engine",
            hint=f"build it from the repository root: `{build_command(vendor)}`, or one that "
            f"runs this node's own software: `python -m farm.sandbox.host_image"
            f"{' --vendor ' + vendor if vendor else ''}` (or name another image with "
            f"{IMAGE_ENV[vendor]})",
        )
    return SandboxUnavailable(
        f"the docker engine refused the sandbox with image '{image}' ({_cause(exc)})",
        hint="see the engine's log (journalctl -u docker), or choose bwrap (FARM_SANDBOX=bwrap)",
    )


def _cause(exc: BaseException) -> str:
    """The engine's complaint on one short line (the SDK nests urllib3 and requests errors)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 240 else text[:237] + "..."


class ContainerHandle:
    """subprocess.Popen's interface over a created container: stdin goes to the attach socket,
    a thread splits the engine's multiplexed stream into real stdout/stderr pipes."""

    def __init__(self, client: Any, container: Any) -> None:
        self._client = client
        self.container = container
        self.returncode: int | None = None
        self.limit_hit: str | None = None  # "memory_bytes" when the engine's OOM killer ended it
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
                self._read_limit(state)
        return self.returncode

    def _read_limit(self, state: dict[str, Any]) -> None:
        if state.get("OOMKilled"):
            self.limit_hit = "memory_bytes"

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
            with contextlib.suppress(Exception):  # removed meanwhile: no limit to report
                self.container.reload()
                self._read_limit(self.container.attrs.get("State", {}))
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
    """stdin of the container: writes go to the attach socket (see close())."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.closed = False

    def write(self, data: bytes) -> int:
        self._sock.sendall(data)
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        # No half-close: on a container created without stdin_once (which the SDK's create does
        # not offer) the engine ends the whole attach session, output included, when its client
        # half-closes. The program sees no EOF on stdin; the harness ends workers with its "bye"
        # request, and anything else is killed when its SandboxProcess closes.
        self.closed = True


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
