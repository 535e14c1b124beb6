"""Pre-started workers, so an evaluation on a warm node does not wait for Python, torch and the
device to start (several seconds per worker).

A candidate worker serves exactly one submission and is then thrown away (a submission may
leave anything behind in its process); the pool starts its replacement in the background as soon
as one is taken. Baseline workers run only the problem's reference (trusted code), so they are
kept and reused across evaluations, one per kind (eager, compile).

A GPU worker also pays the timer's one-time costs before it is handed a job (`op warm`: the
profiler's start-up, about 3 s, and the marker kernels' compilation), so the job's `load` does
not. Getting one ready takes 6-9 s against a job's 1-2 s, so several get ready at once
(`ready_candidates` of them are ready or getting ready; FARM_POOL_READY), each waited on by a
thread of its own.

Every worker is started by one long-lived thread of the pool: sandboxes die with the thread
that started them (PR_SET_PDEATHSIG follows the thread, not the process), so a short-lived
starter thread would take its worker down with it. Only the waiting is on other threads.
"""

from __future__ import annotations

import queue
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from farm.config import Env
from farm.hardware import kinds
from farm.harness.channel import WorkerDied, WorkerProcess, WorkerSpec
from farm.sandbox import Limits, get_runner
from farm.suite.loader import suite_dirs

PREPARE_TIMEOUT_S = 300.0  # interpreter, torch, device context and the timer's first start-up
READY_GPU = 4  # GPU workers kept ready or getting ready, unless FARM_POOL_READY says otherwise
# where a started worker, or why it could not start, is put
Order = queue.Queue[WorkerProcess | BaseException]


@dataclass
class WorkerPool:
    """Warm workers for one device of this node. Thread-safe; `close()` stops them all."""

    device: str
    device_index: int = 0
    sandbox: str = "auto"
    # A warm worker may wait long before its job: the sandbox's wall clock must not run out
    # while it waits, so it is a day; the supervisor's per-request timeouts bound each job.
    limits: Limits = field(default_factory=lambda: Limits(wall_seconds=86400.0))
    # candidate workers kept ready or getting ready (None: FARM_POOL_READY, else 4 on a GPU and
    # 1 elsewhere, where a worker has no timer start-up to pay)
    ready_candidates: int | None = None
    # whether a worker pays the timer's one-time costs before its job (None: on a GPU)
    warm: bool | None = None
    _ready: Order = field(default_factory=queue.Queue)
    _baselines: dict[str, WorkerProcess] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _orders: queue.Queue[Order | None] = field(default_factory=queue.Queue)
    _closed: bool = False

    def __post_init__(self) -> None:
        self.runner = get_runner(self.sandbox, vendor=kinds.gpu_vendor(self.device))
        if self.warm is None:
            self.warm = kinds.is_gpu(self.device)
        if self.ready_candidates is None:
            default = READY_GPU if kinds.is_gpu(self.device) else 1
            self.ready_candidates = Env().integer("FARM_POOL_READY", default, minimum=1)
        self._starter = threading.Thread(target=self._serve, name="farm-pool-starter", daemon=True)
        self._starter.start()
        for _ in range(self.ready_candidates):
            self._start_in_background()

    def candidate(self, timeout: float = PREPARE_TIMEOUT_S) -> WorkerProcess:
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
        reply: Order = queue.Queue()
        self._orders.put(reply)
        item = reply.get(timeout=PREPARE_TIMEOUT_S)
        if isinstance(item, BaseException):
            raise item
        return item

    def _serve(self) -> None:
        """The starter thread: start a worker for each order until the pool closes; a thread
        of the worker's own waits for it to be ready."""
        while (order := self._orders.get()) is not None:
            try:
                worker = self._spawn()
            except (WorkerDied, OSError) as exc:
                order.put(exc)
                continue
            threading.Thread(
                target=self._prepare, args=(worker, order), name="farm-pool-prepare", daemon=True
            ).start()

    def _spawn(self) -> WorkerProcess:
        workdir = Path(tempfile.mkdtemp(prefix="farm-worker-"))
        spec = WorkerSpec(
            device=self.device,
            read_dirs=readable_suite_dirs(),
            workdir=workdir,
            device_index=self.device_index,
            limits=self.limits,
        )
        try:
            worker = WorkerProcess(self.runner, spec, wait=False)
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        if self.warm:
            try:
                worker.send({"op": "warm"})  # right behind its setup
            except WorkerDied:
                self.discard(worker, wait=True)
                raise
        return worker

    def _prepare(self, worker: WorkerProcess, order: Order) -> None:
        """Wait for `worker`'s greeting (and, on a GPU, its warm-up), then hand it to `order`."""
        deadline = time.monotonic() + PREPARE_TIMEOUT_S  # greeting and warm-up together
        try:
            # unwatched: only the harness runs in it yet, and a watch polls /proc from this
            # process, where another evaluation's timing windows are being timed
            worker.ready(timeout=PREPARE_TIMEOUT_S, watched=False)
            if self.warm:
                left = max(deadline - time.monotonic(), 1.0)
                reply, _ = worker.receive(timeout=left, watched=False)
                if not reply.get("ok"):
                    raise WorkerDied("RUNTIME_ERROR", f"warm-up failed: {reply.get('detail')}")
        except (WorkerDied, OSError) as exc:
            self.discard(worker, wait=True)
            order.put(exc)
            return
        if self._closed:  # whoever waits on the order learns it at once
            self.discard(worker, wait=True)
            order.put(WorkerDied("RUNTIME_ERROR", "the worker pool was closed"))
            return
        order.put(worker)


def readable_suite_dirs() -> list[Path]:
    """Every existing suite directory: a pre-started worker may be given any problem."""
    return [d.resolve() for d in suite_dirs() if d.is_dir()]
