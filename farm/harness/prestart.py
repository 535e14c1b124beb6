"""A candidate worker started before the trusted side imports torch.

A cold `farm eval` pays two interpreter + torch start-ups, the supervisor's and the worker's;
started one after the other they are the largest fixed cost of an evaluation outside the timing
loop. When the workloads are named (`--workload`), the sandbox limits can be sized without torch
(from the problem file alone), so the CLI starts the worker first and the supervisor imports torch
while the worker does (farm.harness.commands). The supervisor takes the worker over as it would a
fresh one: same runner, same limits, same work dir layout. Nothing here imports torch.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from farm.errors import FarmError
from farm.hardware import kinds
from farm.harness.budget import LimitPolicy
from farm.harness.channel import WorkerDied, WorkerProcess, WorkerSpec
from farm.sandbox import Limits, get_runner
from farm.suite.loader import load_suite
from farm.suite.model import Problem, Workload


@dataclass
class Early:
    """A started candidate worker and what the result document says about its sandbox."""

    worker: WorkerProcess
    root: Path  # the temporary directory holding its work dir
    suite_root: Path
    problem: str
    device: str
    workloads: list[str]
    sandbox_name: str
    sandbox_note: str | None
    memory_bytes: int

    def serves(self, suite_root: Path, problem: str, device: str, workloads: list[str]) -> bool:
        """Whether this worker was started for exactly this evaluation."""
        return (suite_root.resolve(), problem, device, workloads) == (
            self.suite_root,
            self.problem,
            self.device,
            self.workloads,
        )

    def close(self) -> None:
        """Kill the worker if it is still running and remove its work dir."""
        with contextlib.suppress(Exception):
            self.worker.discard()
        shutil.rmtree(self.root, ignore_errors=True)


def start(
    *,
    suite: str,
    problem: str,
    device: str,
    workloads: list[str] | None,
    sandbox: str,
    device_index: int = 0,
) -> Early | None:
    """The candidate worker for these arguments, started now; None when the workloads are not
    named or anything is off (the supervisor then starts one itself and reports what was wrong)."""
    if not workloads:
        return None
    try:
        chosen = _problem(suite, problem)
        named = [w for w in chosen.workloads if w.id in workloads]
        if len(named) != len(set(workloads)):
            return None
        return _spawn(chosen, named, device, device_index, sandbox)
    except (FarmError, WorkerDied, OSError, KeyError, ValueError, TypeError):
        return None


def _problem(suite: str, problem: str) -> Problem:
    return load_suite(suite).problem(problem)


def _spawn(
    problem: Problem,
    workloads: list[Workload],
    device: str,
    device_index: int,
    sandbox: str,
) -> Early:
    policy = LimitPolicy.from_env()
    gpu = kinds.is_gpu(device)
    largest = max((problem.device_bytes(w) if gpu else problem.host_bytes(w)) for w in workloads)
    limits = policy.sandbox_limits(Limits(), workload_bytes=largest, gpu=gpu)
    runner = get_runner(sandbox, vendor=kinds.gpu_vendor(device))
    root = Path(tempfile.mkdtemp(prefix="farm-eval-"))
    workdir = root / "candidate"
    workdir.mkdir()
    spec = WorkerSpec(
        device=device,
        read_dirs=[problem.directory.resolve()],
        workdir=workdir,
        device_index=device_index,
        limits=limits,
        gpu_memory_bytes=policy.gpu_memory_bytes(largest) if gpu else None,
    )
    try:
        worker = WorkerProcess(runner, spec, wait=False)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return Early(
        worker=worker,
        root=root,
        suite_root=problem.directory.resolve().parent,
        problem=problem.name,
        device=device,
        workloads=[w.id for w in workloads],
        sandbox_name=runner.name,
        sandbox_note=runner.note,
        memory_bytes=limits.memory_bytes,
    )
