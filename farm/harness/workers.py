"""The evaluation's sandboxed workers: taken from the warm pool or the worker the CLI started
ahead when there is one, else started fresh with limits sized to the workloads, and given back
(or discarded: a candidate's worker never serves another evaluation) when a step is done."""

from __future__ import annotations

import functools
from pathlib import Path

from farm.harness.case import Case
from farm.harness.channel import WorkerProcess, WorkerSpec
from farm.harness.record import Setting
from farm.harness.sizes import Sizes
from farm.sandbox import Runner, get_runner
from farm.suite.model import Workload


class Workers:
    """Where an evaluation's workers come from; what it learns of their sandbox goes into the
    result's environment (`setting`)."""

    def __init__(self, case: Case, sizes: Sizes, setting: Setting) -> None:
        self.case, self.sizes, self.setting = case, sizes, setting
        self.early = case.opts.early  # used once, by the first candidate

    @functools.cached_property
    def runner(self) -> Runner:
        """The sandbox runner of this evaluation's workers (its pool's, when it has one), which
        every other sandboxed step of it uses too (the npu-sim replay): found once."""
        if self.case.opts.pool is not None:
            return self.case.opts.pool.runner
        return get_runner(self.case.opts.sandbox, vendor=self.case.target.kind.gpu_vendor)

    def acquire(
        self, kind: str, workdir: Path, workloads: list[Workload], *, wait: bool = True
    ) -> WorkerProcess:
        """A started worker: from the pool when there is one, else a fresh one in `workdir` with
        limits sized to the largest of `workloads` (`wait`: see WorkerProcess)."""
        early = self._early(kind, workloads)
        if early is not None:
            return early
        pool = self.case.opts.pool
        if pool is not None:
            self.setting.sandbox = pool.runner.name
            return pool.candidate() if kind == "candidate" else pool.baseline(kind)
        return self._fresh(workdir, workloads, wait=wait)

    def release(self, kind: str, worker: WorkerProcess) -> None:
        pool = self.case.opts.pool
        if pool is None and kind == "candidate":
            worker.discard()
        elif pool is None:
            worker.close()
        elif kind == "candidate" or worker.proc.poll() is not None:
            pool.discard(worker)
        else:
            pool.give_back(kind, worker)

    def _early(self, kind: str, workloads: list[Workload]) -> WorkerProcess | None:
        """The worker the CLI started ahead, when it serves this candidate (used once)."""
        early, self.early = self.early, None
        case, ids = self.case, [w.id for w in workloads]
        if not (kind == "candidate" and early):
            return None
        if not early.serves(case.suite.root, case.problem.name, case.target.device, ids):
            return None
        self.setting.sandbox = early.sandbox_name
        self.setting.sandbox_note = early.sandbox_note or self.setting.sandbox_note
        self.setting.limits = {"memory_bytes": early.memory_bytes}
        return early.worker

    def _fresh(self, workdir: Path, workloads: list[Workload], *, wait: bool) -> WorkerProcess:
        workdir.mkdir(parents=True, exist_ok=True)
        case, runner = self.case, self.runner
        largest = max((self.sizes.sandbox_bytes(w) for w in workloads), default=0)
        limits = case.limit_policy.sandbox_limits(
            case.opts.limits, workload_bytes=largest, gpu=case.target.kind.gpu
        )
        spec = WorkerSpec(
            device=case.target.device,
            read_dirs=[case.problem.directory.resolve()],
            workdir=workdir,
            device_index=case.opts.device_index,
            limits=limits,
            gpu_memory_bytes=self.sizes.gpu_limit_bytes(),
        )
        self.setting.sandbox = runner.name
        self.setting.sandbox_note = runner.note or self.setting.sandbox_note
        self.setting.limits = {"memory_bytes": limits.memory_bytes}
        return WorkerProcess(runner, spec, wait=wait)
