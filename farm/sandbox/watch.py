"""Memory limits that the trusted side enforces from outside the sandbox.

No rlimit or cgroup bounds GPU memory, an allocator cap set inside the worker is the
submission's to lift, and on GPU sandboxes host memory has no rlimit either (the CUDA and ROCm
runtimes reserve far more address space than they use, so RLIMIT_AS cannot be set). So the
trusted side watches: while a request runs, a thread reads how much device memory (NVML) and
resident host memory (/proc) the processes of the sandbox's tree hold, and kills the sandbox
when a sum passes its limit (`SandboxProcess.termination().limit` is then "gpu_memory_bytes" or
"memory_bytes").

The sandbox's processes are found from its root pid on the host (/proc children links), so the
watch works for every runner whose handle has a host pid (bwrap, process, docker's init). Where
NVML is missing (no nvidia-ml-py, no NVIDIA driver) the watch does nothing and says so once in
the log; the worker's own allocator cap then only stops honest over-allocation.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

log = logging.getLogger(__name__)
INTERVAL_S = 0.05


class MemoryWatch:
    """Context manager: while inside, kill `proc` if its process tree holds over `gpu_limit`
    bytes on the device `device_index` (host numbering) or over `rss_limit` bytes of resident
    host memory. A limit of None is not watched. `peak_gpu` and `peak_rss` are the most seen."""

    def __init__(
        self, proc: Any, device_index: int, gpu_limit: int | None, rss_limit: int | None = None
    ) -> None:
        self.proc, self.gpu_limit, self.rss_limit = proc, gpu_limit, rss_limit
        self.peak_gpu = self.peak_rss = 0
        self.seen = ""  # at a kill: what the tree held against which limit
        self._stop = threading.Event()
        self._handle = _nvml_handle(device_index) if gpu_limit is not None else None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> MemoryWatch:
        if self._handle is not None or self.rss_limit is not None:
            self._thread = threading.Thread(target=self._run, name="farm-devmem", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL_S):
            over = self.over_limit()
            if over is not None:
                if self.proc.limit_hit is None:
                    self.proc.limit_hit, self.proc.limit_seen = over, self.seen
                self.proc.kill()
                return

    def over_limit(self) -> str | None:
        """The limit the sandbox's tree is over now ("gpu_memory_bytes", "memory_bytes"), or
        None."""
        tree = process_tree(int(self.proc.pid))
        if self._handle is not None and self.gpu_limit is not None:
            used = sum(b for pid, b in _device_processes(self._handle) if pid in tree)
            self.peak_gpu = max(self.peak_gpu, used)
            if used > self.gpu_limit:
                self.seen = _held("device", used, self.gpu_limit)
                return "gpu_memory_bytes"
        if self.rss_limit is not None:
            rss = sum(resident_bytes(pid) for pid in tree)
            self.peak_rss = max(self.peak_rss, rss)
            if rss > self.rss_limit:
                self.seen = _held("resident host", rss, self.rss_limit)
                return "memory_bytes"
        return None


def _held(what: str, used: int, limit: int) -> str:
    gib = 1 << 30
    return f"the sandbox held {used / gib:.2f} GiB of {what} memory, over {limit / gib:.2f} GiB"


def resident_bytes(pid: int) -> int:
    """Resident memory of one process (bytes; 0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


_PAGE = os.sysconf("SC_PAGE_SIZE")


def process_tree(root: int) -> set[int]:
    """`root` and every process below it (host pids), from /proc's children links."""
    seen, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        for children in Path(f"/proc/{pid}/task").glob("*/children"):
            try:
                todo += [int(c) for c in children.read_text().split()]
            except OSError:
                continue  # the task ended meanwhile
    return seen


_nvml: ModuleType | None = None
_nvml_lock = threading.Lock()
_warned = False


def _nvml_handle(index: int) -> Any:
    """NVML's handle of device `index`, or None (logged once) when NVML cannot be used."""
    global _nvml, _warned
    with _nvml_lock:
        try:
            if _nvml is None:
                import pynvml

                pynvml.nvmlInit()
                _nvml = pynvml
            return _nvml.nvmlDeviceGetHandleByIndex(index)
        except Exception as exc:  # no library, no driver, no such device
            if not _warned:
                _warned = True
                log.warning("device memory is not watched (NVML unavailable: %s)", exc)
            return None


def _device_processes(handle: Any) -> list[tuple[int, int]]:
    """(host pid, bytes) of every process with memory on the device."""
    assert _nvml is not None
    found: list[tuple[int, int]] = []
    for query in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        try:
            procs = getattr(_nvml, query)(handle)
        except Exception:
            continue
        found += [(int(p.pid), int(p.usedGpuMemory or 0)) for p in procs]
    return found
