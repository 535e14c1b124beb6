"""Start a worker through a sandbox runner and exchange requests with it, with time limits."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from farm.harness import protocol
from farm.sandbox import DeviceAssignment, Limits, Runner

_STDERR_KEEP = 64 << 10  # bytes of worker stderr kept for the log


class WorkerDied(Exception):
    """The worker exited or was killed; `status` is TIMEOUT or RUNTIME_ERROR."""

    def __init__(self, status: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass
class WorkerSpec:
    """How to start one worker. `read_dirs` are the host directories it may read (the problem's
    directory, or every suite directory for a pre-started worker that learns its problem later)."""

    device: str  # cuda | rocm | cpu | npu-sim
    read_dirs: list[Path]
    workdir: Path
    device_index: int = 0
    limits: Limits = field(default_factory=Limits)


class WorkerProcess:
    """One `python -m farm.harness.worker` in a sandbox; `request()` is one round trip."""

    def __init__(self, runner: Runner, spec: WorkerSpec) -> None:
        self.spec = spec
        self.log = bytearray()
        env = worker_env(spec)
        self.proc = runner.spawn(
            [sys.executable, "-m", "farm.harness.worker"],
            workdir=spec.workdir,
            env=env,
            limits=spec.limits,
            device=_assignment(spec),
            ro_binds=spec.read_dirs,
        )
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()
        self.request(
            {"op": "setup", "device": spec.device},
            timeout=300,
        )

    def request(
        self, header: dict[str, Any], *, timeout: float
    ) -> tuple[dict[str, Any], list[torch.Tensor]]:
        """Send `header`, wait up to `timeout` s for the reply; WorkerDied on death or timeout."""
        try:
            protocol.send(self.proc.stdin, header)
        except (BrokenPipeError, OSError):
            raise self._died("the worker closed its input") from None
        return self._read(timeout, str(header.get("op")))

    def _read(self, timeout: float, what: str) -> tuple[dict[str, Any], list[torch.Tensor]]:
        box: dict[str, Any] = {}

        def read() -> None:
            try:
                box["reply"] = protocol.recv(self.proc.stdout)
            except Exception as exc:
                box["error"] = exc

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if reader.is_alive():
            self.kill()
            raise WorkerDied("TIMEOUT", f"no answer to '{what}' within {timeout:.0f} s")
        if "error" in box:
            raise self._died(str(box["error"]))
        return box["reply"]

    def receive(self, *, timeout: float) -> tuple[dict[str, Any], list[torch.Tensor]]:
        """Read the next frame the worker sends unasked (the second half of a reply)."""
        return self._read(timeout, "receive")

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
        try:
            self.proc.wait(timeout=5)
            end = self.proc.termination()
            why = f"killed by limit {end.limit}" if end.limit else f"exit status {end.returncode}"
            status = "TIMEOUT" if end.limit in ("wall_seconds", "cpu_seconds") else "RUNTIME_ERROR"
        except Exception:
            self.kill()
            why, status = "did not exit", "RUNTIME_ERROR"
        tail = self.stderr_text()[-2000:]
        return WorkerDied(status, f"the worker died ({why}): {detail}\n{tail}".strip())


def worker_env(spec: WorkerSpec) -> dict[str, str]:
    """The worker's whole environment: nothing from the host except what is named here."""
    import farm

    root = str(Path(farm.__file__).resolve().parent.parent)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": root,
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": str(spec.workdir),
        "TMPDIR": str(spec.workdir / "tmp"),
        "TRITON_CACHE_DIR": str(spec.workdir / "triton-cache"),
        "TORCHINDUCTOR_CACHE_DIR": str(spec.workdir / "inductor-cache"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
    }
    for key in ("LD_LIBRARY_PATH", "CUDA_HOME", "ROCM_PATH", "CC", "CXX", "TRITON_LIBCUDA_PATH"):
        if key in os.environ:
            env[key] = os.environ[key]
    if spec.device in ("cuda", "rocm"):
        var = "CUDA_VISIBLE_DEVICES" if spec.device == "cuda" else "HIP_VISIBLE_DEVICES"
        env[var] = _visible(os.environ.get(var), spec.device_index)
    (spec.workdir / "tmp").mkdir(parents=True, exist_ok=True)
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
    if spec.device == "cuda":
        return DeviceAssignment(vendor="nvidia", index=spec.device_index)
    if spec.device == "rocm":
        return DeviceAssignment(vendor="amd", index=spec.device_index)
    return None
