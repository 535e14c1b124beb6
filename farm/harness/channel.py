"""Start a worker through a sandbox runner and exchange requests with it, with time limits."""

from __future__ import annotations

import shutil
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from farm.config import Env, node_settings
from farm.hardware import kinds
from farm.harness import protocol
from farm.sandbox import DeviceAssignment, Limits, Runner
from farm.sandbox.toolchain import node_toolchain
from farm.sandbox.watch import MemoryWatch

if TYPE_CHECKING:  # starting a worker needs no torch (farm.harness.prestart)
    import torch

_STDERR_KEEP = 64 << 10  # bytes of worker stderr kept for the log
WORKER_ARGS = ["-m", "farm.harness.worker"]  # what the sandbox's interpreter runs


class WorkerDied(Exception):
    """The worker exited, was killed, or sent what is not a frame. `status` is TIMEOUT or
    RUNTIME_ERROR; `code` the reason code (TIMEOUT, MEMORY_LIMIT, OUTPUT_LIMIT, WORKER_DIED,
    PROTOCOL_ERROR); `detail` names the limit or what was wrong; `limit` the Limits field that
    ended it: wall_seconds when this side's timer did (the sandbox's watchdog or a request's
    timeout), else what the sandbox saw (cpu_seconds and file_size_bytes are read from the
    signal that ended the process, which it can send itself), or None."""

    def __init__(
        self, status: str, detail: str, code: str | None = None, limit: str | None = None
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.code = code or status
        self.limit = limit


# The limit a sandbox saw its process hit -> (status, reason code) of the workload.
_LIMIT_CODES = {
    "wall_seconds": ("TIMEOUT", "TIMEOUT"),
    "cpu_seconds": ("TIMEOUT", "TIMEOUT"),
    "memory_bytes": ("RUNTIME_ERROR", "MEMORY_LIMIT"),
    "gpu_memory_bytes": ("RUNTIME_ERROR", "MEMORY_LIMIT"),
    "output_bytes": ("RUNTIME_ERROR", "OUTPUT_LIMIT"),
    "file_size_bytes": ("RUNTIME_ERROR", "FILE_SIZE_LIMIT"),
}


@dataclass
class WorkerSpec:
    """How to start one worker. `read_dirs` are the host directories it may read (the problem's
    directory, or every suite directory for a pre-started worker that learns its problem later).
    `args`: what the sandbox's interpreter runs (a program that speaks the worker's framing:
    the setup frame in, a greeting out, then one reply per request)."""

    device: str  # a device kind (farm.hardware.kinds)
    read_dirs: list[Path]
    workdir: Path
    device_index: int = 0
    limits: Limits = field(default_factory=Limits)
    gpu_memory_bytes: int | None = None  # the worker's own allocator cap (the watch enforces)
    args: tuple[str, ...] | None = None  # None: the worker, WORKER_ARGS


class WorkerProcess:
    """One `python -m farm.harness.worker` in a sandbox; `request()` is one round trip."""

    def __init__(self, runner: Runner, spec: WorkerSpec, *, wait: bool = True) -> None:
        """Start the worker and send its setup; with `wait`, wait for its greeting too (else
        call `ready()` before reading any reply: requests may be sent ahead of it)."""
        self.spec = spec
        self.log = bytearray()
        env = worker_env(spec)
        self.proc = runner.spawn(
            [sys.executable, *(spec.args or WORKER_ARGS)],
            workdir=spec.workdir,
            env=env,
            limits=spec.limits,
            device=_assignment(spec),
            ro_binds=spec.read_dirs,
        )
        # GPU sandboxes get no address-space rlimit: their host memory is watched instead
        self._rss_limit = spec.limits.memory_bytes if kinds.is_gpu(spec.device) else None
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()
        self._greeted = False
        self.gpu_peak = 0  # the most device memory the watch saw the sandbox hold (bytes)
        self.send({"op": "setup", "device": spec.device, "gpu_memory_bytes": spec.gpu_memory_bytes})
        if wait:
            self.ready()

    def ready(self, timeout: float = 300, *, watched: bool = True) -> None:
        """Wait for the worker's greeting (its interpreter, torch and device are up); returns at
        once when it came already. `watched=False`: its host memory is not watched meanwhile
        (a pool's worker getting ready runs only the harness; see `receive`)."""
        if not self._greeted:
            self._read(timeout, "setup", 0, None, watched=watched)
            self._greeted = True

    def send(self, header: dict[str, Any], tensors: list[torch.Tensor] | None = None) -> None:
        """Send one request (with the inputs' `tensors`, farm.harness.feed) without waiting
        for its reply (read it with `receive`)."""
        try:
            protocol.send(self.proc.stdin, header, tensors or [])
        except (BrokenPipeError, OSError):
            raise self._died("the worker closed its input") from None

    def request(
        self,
        header: dict[str, Any],
        *,
        timeout: float,
        max_bytes: int = 0,
        watch: int | None = None,
        tensors: list[torch.Tensor] | None = None,
    ) -> tuple[dict[str, Any], list[torch.Tensor]]:
        """Send `header` (and `tensors`: the calls' inputs on the pipe), wait up to `timeout` s
        for the reply frame, which may carry at most `max_bytes` of tensors; while waiting, the
        worker may hold at most `watch` bytes of device memory (None: not watched). WorkerDied
        on death, a limit, or a bad frame."""
        self.send(header, tensors)
        return self._read(timeout, str(header.get("op")), max_bytes, watch)

    def receive(
        self, *, timeout: float, max_bytes: int = 0, watched: bool = True
    ) -> tuple[dict[str, Any], list[torch.Tensor]]:
        """Read the next frame the worker sends unasked (the second half of a reply), or the
        reply to a request sent with `send`. `watched=False` leaves its host memory unwatched
        while it runs only the harness: the watch's polling runs in this process, beside the
        evaluation that this process times."""
        return self._read(timeout, "receive", max_bytes, None, watched=watched)

    def _read(
        self, timeout: float, what: str, max_bytes: int, watch: int | None, *, watched: bool = True
    ) -> tuple[dict[str, Any], list[torch.Tensor]]:
        box: dict[str, Any] = {}

        def read() -> None:
            try:
                box["reply"] = protocol.recv(self.proc.stdout, max_bytes=max_bytes)
            except Exception as exc:
                box["error"] = exc

        reader = threading.Thread(target=read, daemon=True)
        rss_limit = self._rss_limit if watched else None
        with MemoryWatch(self.proc, self.spec.device_index, watch, rss_limit) as seen:
            reader.start()
            reader.join(timeout)
        self.gpu_peak = max(self.gpu_peak, seen.peak_gpu)
        if reader.is_alive():
            self.kill()
            raise WorkerDied(
                "TIMEOUT",
                f"no answer to '{what}' within its limit of {timeout:.1f} s",
                "TIMEOUT",
                "wall_seconds",
            )
        if "error" in box:
            raise self._died(str(box["error"]))
        return box["reply"]

    def close(self) -> None:
        try:
            protocol.send(self.proc.stdin, {"op": "bye"})
            self.proc.wait(timeout=10)
        except Exception:
            pass
        self.proc.close()
        self._drain.join(timeout=2)

    def kill(self) -> None:
        self.proc.kill()

    def discard(self) -> None:
        """End a worker that will serve nothing more, at once: no goodbye to wait on (a
        candidate's process is thrown away whatever state it is in)."""
        self.proc.kill()
        self.proc.close()
        self._drain.join(timeout=2)

    def stderr_text(self) -> str:
        return self.log.decode(errors="replace")

    def _read_stderr(self) -> None:
        while True:
            try:
                chunk = self.proc.stderr.read(65536)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            self.log += chunk
            if len(self.log) > _STDERR_KEEP:
                del self.log[: len(self.log) - _STDERR_KEEP]

    def _died(self, detail: str) -> WorkerDied:
        """How the worker ended, from what the trusted side saw: the limit the sandbox enforced,
        else the exit status or signal, else the frame that was not one."""
        try:
            self.proc.wait(timeout=5)
            end = self.proc.termination()
        except Exception:
            self.kill()
            return WorkerDied(
                "RUNTIME_ERROR", f"the worker sent a bad frame: {detail}", "PROTOCOL_ERROR"
            )
        tail = self.stderr_text()[-2000:]
        if end.limit in _LIMIT_CODES:
            status, code = _LIMIT_CODES[end.limit]
            limit = getattr(self.spec.limits, end.limit, None)
            seen = self.proc.limit_seen or (limit and _amount(end.limit, limit))
            shown = f" ({seen})" if seen else ""
            return WorkerDied(
                status, f"killed at the {end.limit} limit{shown}\n{tail}".strip(), code, end.limit
            )
        why = f"signal {end.signal}" if end.signal else f"exit status {end.returncode}"
        if "ProtocolError" in detail or "frame" in detail:
            why += f"; {detail}"
        return WorkerDied(
            "RUNTIME_ERROR", f"the worker died ({why})\n{tail}".strip(), "WORKER_DIED"
        )


def _amount(limit: str, value: float) -> str:
    return f"{value / (1 << 30):.2f} GiB" if limit.endswith("bytes") else f"{value:g} s"


def worker_env(spec: WorkerSpec) -> dict[str, str]:
    """The worker's whole environment: nothing from the host except what is named here."""
    import farm

    root = str(Path(farm.__file__).resolve().parent.parent)
    kind = kinds.get_kind(spec.device)
    tools = node_toolchain(kind.gpu_vendor)
    settings = node_settings()
    env = {
        "PATH": tools.path_value(),
        "PYTHONPATH": root,
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": str(spec.workdir),
        "TMPDIR": str(spec.workdir / "tmp"),
        "TRITON_CACHE_DIR": str(spec.workdir / "triton-cache"),
        "TORCHINDUCTOR_CACHE_DIR": str(spec.workdir / "inductor-cache"),
        "TORCH_EXTENSIONS_DIR": str(spec.workdir / "torch-extensions"),
        "OMP_NUM_THREADS": settings.omp_num_threads,
        # Inductor compiles in the worker's own process: its default pool of compile processes
        # would outlive every torch.compile call, and a child process left behind by a call is
        # work outside the timer the guard rejects (PROCESS_LEFT_RUNNING)
        "TORCHINDUCTOR_COMPILE_THREADS": "1",
        **tools.env,
    }
    if settings.library_path:
        env["LD_LIBRARY_PATH"] = ":".join(str(p) for p in settings.library_path)
    var = kind.pin_variable
    if var is not None:
        env[var] = _visible(Env().raw(var), spec.device_index)
    return env


def stage_source(source_path: Path, workdir: Path) -> Path:
    """Copy the submission into the worker's work dir (the only place it can read it from)."""
    target = workdir / "submission.py"
    shutil.copyfile(source_path, target)
    return target


def _visible(current: str | None, index: int) -> str:
    """The one device the worker may see, as the host names it (respecting a narrowed set)."""
    if current:
        devices = [d for d in current.split(",") if d.strip()]
        if index < len(devices):
            return devices[index].strip()
    return str(index)


def _assignment(spec: WorkerSpec) -> DeviceAssignment | None:
    vendor = kinds.gpu_vendor(spec.device)
    return None if vendor is None else DeviceAssignment(vendor=vendor, index=spec.device_index)
