"""Pre-started workers, so an evaluation on a warm node does not wait for Python, torch and the
device to start (several seconds per worker).

A candidate worker serves exactly one submission and is then thrown away (a submission may
leave anything behind in its process); the pool starts its replacement in the background as soon
as one is taken. Baseline workers run only the problem's reference (trusted code), so they are
kept and reused across evaluations, one per kind (eager, compile).

Every worker is started by one long-lived thread of the pool: sandboxes die with the thread
that started them (PR_SET_PDEATHSIG follows the thread, not the process), so a short-lived
starter thread would take its worker down with it.
"""

from __future__ import annotations

import queue
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from farm.hardware import kinds
from farm.harness.channel import WorkerDied, WorkerProcess, WorkerSpec
from farm.sandbox import Limits, get_runner
from farm.suite.loader import suite_dirs


@dataclass
class WorkerPool:
    """Warm workers for one device of this node. Thread-safe; `close()` stops them all."""

    device: str
    device_index: int = 0
    sandbox: str = "auto"
    # A warm worker may wait long before its job: the sandbox's wall clock must not run out
    # while it waits, so it is a day; the supervisor's per-request timeouts bound each job.
    limits: Limits = field(default_factory=lambda: Limits(wall_seconds=86400.0))
    ready_candidates: int = 1
    _ready: queue.Queue[WorkerProcess | BaseException] = field(default_factory=queue.Queue)
    _baselines: dict[str, WorkerProcess] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _orders: queue.Queue[queue.Queue[WorkerProcess | BaseException] | None] = field(
        default_factory=queue.Queue
    )
    _closed: bool = False

    def __post_init__(self) -> None:
        self.runner = get_runner(self.sandbox, vendor=kinds.gpu_vendor(self.device))
        self._starter = threading.Thread(target=self._serve, name="farm-pool-starter", daemon=True)
        self._starter.start()
        for _ in range(self.ready_candidates):
            self._start_in_background()

    def candidate(self, timeout: float = 300) -> WorkerProcess:
        """A fresh, started worker for one submission (waits for one if none is ready)."""
        item = self._ready.get(timeout=timeout)
        self._start_in_background()
        if isinstance(item, BaseException):
            raise item
        return item

    def discard(self, worker: WorkerProcess, *, wait: bool = False) -> None:
        """Stop a used worker and delete its work directory; in the background unless `wait`
        (an interpreter with torch loaded takes a second or more to exit)."""

        def stop() -> None:
            worker.close()
            shutil.rmtree(worker.spec.workdir, ignore_errors=True)

        if wait:
            stop()
        else:
            threading.Thread(target=stop, name="farm-pool-discard", daemon=True).start()

    def baseline(self, kind: str) -> WorkerProcess:
        """The warm baseline worker of `kind`; started on first use."""
        with self._lock:
            worker = self._baselines.pop(kind, None)
        if worker is not None and worker.proc.poll() is None:
            return worker
        return self._start_now()

    def give_back(self, kind: str, worker: WorkerProcess) -> None:
        """Keep a baseline worker for the next evaluation (or stop it if the pool is closed)."""
        with self._lock:
            if not self._closed and kind not in self._baselines:
                self._baselines[kind] = worker
                return
        self.discard(worker)

    def close(self) -> None:
        self._orders.put(None)
        with self._lock:
            self._closed = True
            kept, self._baselines = list(self._baselines.values()), {}
        for worker in kept:
            self.discard(worker, wait=True)
        while not self._ready.empty():
            item = self._ready.get_nowait()
            if isinstance(item, WorkerProcess):
                self.discard(item, wait=True)

    def _start_in_background(self) -> None:
        if not self._closed:
            self._orders.put(self._ready)

    def _start_now(self) -> WorkerProcess:
        reply: queue.Queue[WorkerProcess | BaseException] = queue.Queue()
        self._orders.put(reply)
        item = reply.get(timeout=300)
        if isinstance(item, BaseException):
            raise item
        return item

    def _serve(self) -> None:
        """The starter thread: start a worker for each order until the pool closes."""
        while (order := self._orders.get()) is not None:
            try:
                worker: WorkerProcess | BaseException = self._start()
            except (WorkerDied, OSError) as exc:
                worker = exc
            if self._closed and isinstance(worker, WorkerProcess):
                self.discard(worker, wait=True)
                continue
            order.put(worker)

    def _start(self) -> WorkerProcess:
        workdir = Path(tempfile.mkdtemp(prefix="farm-worker-"))
        spec = WorkerSpec(
            device=self.device,
            read_dirs=readable_suite_dirs(),
            workdir=workdir,
            device_index=self.device_index,
            limits=self.limits,
        )
        return WorkerProcess(self.runner, spec)


def readable_suite_dirs() -> list[Path]:
    """Every existing suite directory: a pre-started worker may be given any problem."""
    return [d.resolve() for d in suite_dirs() if d.is_dir()]
