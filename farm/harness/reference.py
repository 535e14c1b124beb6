"""The trusted side's copy of a problem's reference (never loaded in the worker's sandbox
for checking: the worker imports reference.py only for make_inputs)."""

from __future__ import annotations

import io
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from farm.hardware import kinds
from farm.harness import feed, host_load, protocol, runtime
from farm.harness.arena import Arena
from farm.harness.baselines import BaselineCache
from farm.harness.timing import ONE_TIME, CpuTimer, GpuTimer, TimingPolicy, run_windows
from farm.suite.model import Problem, Workload


@cache
def _module(path: str) -> ModuleType:
    return runtime.load_file_module(Path(path), f"farm_reference_{abs(hash(path))}")


def load_reference(problem: Problem) -> ModuleType:
    return _module(str(problem.reference_path.resolve()))


def expected(
    problem: Problem, workload: Workload, seed_base: int, index: int, device: torch.device
) -> list[torch.Tensor]:
    """Reference outputs of call `index` of a request with `seed_base` (made here)."""
    module = load_reference(problem)
    request: dict[str, Any] = {
        "axes": workload.axes,
        "dtype": workload.dtype,
        "seed_base": seed_base,
    }
    inputs = runtime.input_maker(module, request, device)(index)
    return outputs_of(problem, inputs)


def outputs_of(problem: Problem, inputs: Sequence[Any]) -> list[torch.Tensor]:
    """The reference's outputs on `inputs` (made by the trusted side)."""
    with _deterministic():
        result = load_reference(problem).reference(*inputs)
    return [o.detach() for o in runtime.as_output_list(result)]


def checker(
    problem: Problem, workload: Workload, seed_base: int, index: int, device: torch.device
) -> Callable[[Sequence[torch.Tensor]], list[str]] | None:
    """The problem's own checker bound to call `index`'s inputs, or None when reference.py
    defines no `check(inputs, outputs) -> list[str]` (error messages; empty when correct)."""
    module = load_reference(problem)
    check = getattr(module, "check", None)
    if check is None:
        return None
    request = {"axes": workload.axes, "dtype": workload.dtype, "seed_base": seed_base}
    inputs = runtime.input_maker(module, request, device)(index)

    def run(outputs: Sequence[torch.Tensor]) -> list[str]:
        with _deterministic():
            return [str(m) for m in check(inputs, list(outputs))]

    return run


class _deterministic:
    """Reference numerics without TF32 shortcuts (restored afterwards)."""

    def __enter__(self) -> None:
        self.saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

    def __exit__(self, *exc: object) -> None:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = self.saved


@dataclass(frozen=True)
class Yardstick:
    """A trusted measurement of what the harness's own path costs around a call that does
    nothing, the yardstick of a wall-clock rule (farm.guard.plausibility): `per_call_ms` per
    call, `floor_ms` the most one request paid beyond that (a window's round trip and jitter;
    for the check path, the spread of its runs), `runs` how many measurements it rests on."""

    per_call_ms: float
    floor_ms: float
    runs: int

    def to_json(self) -> dict[str, Any]:
        return {"per_call_ms": self.per_call_ms, "floor_ms": self.floor_ms, "runs": self.runs}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Yardstick:
        """Raises KeyError or ValueError for an entry that is not one."""
        return cls(float(data["per_call_ms"]), float(data["floor_ms"]), int(data["runs"]))


def loop_yardstick(
    problem: Problem,
    workload: Workload,
    device: torch.device,
    policy: TimingPolicy,
    llc_bytes: int,
    keep_calls: int,
) -> Yardstick:
    """What the worker's timing loop costs around a call that does nothing but return the
    workload's outputs (making the call's inputs, the cache flush, the markers, the
    synchronisation, the profiler, capturing the outputs), measured here, in the trusted
    process, with the same timer, policy and inputs: per call (ms) over its windows' walls, and
    the most one window paid beyond its calls' share (ms). No value from the worker moves it.
    Its windows keep at most `keep_calls` calls' outputs, as the worker's do (a window of 6 GB
    outputs kept whole would fill the device). The caller measures it when nothing else of the
    evaluation runs (farm.harness.supervisor), and may keep it per node."""
    policy = replace(policy, window=max(1, min(policy.window, keep_calls)))
    module = load_reference(problem)
    request = {"axes": workload.axes, "dtype": workload.dtype, "seed_base": 0}
    make = runtime.input_maker(module, request, device)
    outputs = expected(problem, workload, 0, 0, device)  # captured after every call
    gpu = kinds.on_gpu(device)
    timer = GpuTimer(device, llc_bytes) if gpu else CpuTimer(llc_bytes)
    # the timer's one-time costs (marker kernels' JIT, the profiler's start-up) first, as
    # the worker pays them before the submission is imported
    run_windows(timer, lambda inputs: outputs, make, ONE_TIME)
    # a quarter of the budget: the loop's cost per call settles within a few windows
    short = replace(policy, budget_ms=policy.budget_ms / 4, target_rse=0.0)
    run = run_windows(timer, lambda inputs: outputs, make, short, keep=True)
    if gpu:
        torch.cuda.empty_cache()
    stick = _loop(run.window_wall_ms, run.windows, policy.window)
    return replace(stick, floor_ms=stick.floor_ms + pipe_round_trip_ms())


def _loop(walls_ms: list[float], means_ms: list[float], calls: int) -> Yardstick:
    """A loop's yardstick from its windows of `calls` calls each: their walls and mean times."""
    unexplained = [w - m * calls for w, m in zip(walls_ms, means_ms, strict=True)]
    per_call = max(0.0, sum(unexplained) / max(calls * len(walls_ms), 1))
    floor = max((u - per_call * calls for u in unexplained), default=0.0)
    return Yardstick(per_call, max(0.0, floor), len(walls_ms))


def cached_yardstick(
    cache: BaselineCache | None,
    workload: str,
    kind: str,
    measure: Callable[[], Yardstick],
    *,
    fresh: bool = False,
) -> tuple[Yardstick, Yardstick | None]:
    """(the yardstick to hold a workload to, this node's cached one or None). A node keeps its
    yardsticks like its baselines (farm.harness.baselines, under `kind`), so an evaluation does
    not pay them every time; `fresh` measures again whatever is cached. A measurement is kept
    only when the host was quiet while it was taken (farm.harness.host_load): a yardstick
    measured on a busy host would be loose for every later evaluation."""
    hit = cache.get(workload, kind) if cache is not None else None
    try:
        stored = Yardstick.from_json(hit) if hit is not None else None
    except (KeyError, TypeError, ValueError):
        stored = None
    if stored is not None and not fresh:
        return stored, stored
    stick = measure()
    if cache is not None and not host_load.sample(steal_interval_s=0).busy:
        cache.put(workload, kind, stick.to_json())
    return stick, stored


CHECK_RUNS = 5  # null check rounds per measurement


def check_yardstick(problem: Problem, workload: Workload, device: torch.device) -> Yardstick:
    """What the worker's check path costs around a call that does nothing but return the
    workload's outputs, in ms, measured here, in the trusted process, over the path a checked
    call takes from the moment the supervisor sends its request (farm.harness.feed): the inputs
    handed over (framed and read back on the CPU; viewed in an arena on a GPU), the outputs'
    blocks poisoned, the outputs captured, and the outputs (and on the CPU the inputs' storages)
    handed back (framed and parsed; copied once on a GPU, as the supervisor copies what CUDA IPC
    shares), the runtime guard's watch of the call and its integrity check (harness code, run
    here as the worker runs it: it reads, and sets nothing that outlives the call), and a
    request's round trip to another process (`pipe_round_trip_ms`). The least of CHECK_RUNS
    runs (the check-wall rule takes the warmest check, farm.guard.plausibility
    .check_check_walls), and their spread (most - least) as the floor."""
    module = load_reference(problem)
    request = {"axes": workload.axes, "dtype": workload.dtype, "seed_base": 0}
    inputs = runtime.input_maker(module, request, device)(0)
    outputs = outputs_of(problem, feed.snapshot(inputs))
    gpu = kinds.on_gpu(device)
    arena = Arena(device, feed.arena_bytes(feed.call_bytes(inputs))) if gpu else None
    guard = runtime.Guard(cuda=False)
    guard.before_import()
    guard.after_import()
    try:
        # a first round pays the one-time costs (the guard's first watch, the allocator's first
        # blocks), as the worker's first check does; the rule holds the warm rounds
        _null_check(inputs, outputs, device, arena, guard)
        runs = [_null_check(inputs, outputs, device, arena, guard) for _ in range(CHECK_RUNS)]
    finally:
        if arena is not None:
            arena.close()
    return Yardstick(min(runs), max(runs) - min(runs) + pipe_round_trip_ms(), len(runs))


ECHO = "import os\nwhile True:\n    b = os.read(0, 1)\n    if not b: break\n    os.write(1, b)\n"
ROUND_TRIPS = 21


def pipe_round_trip_ms() -> float:
    """A request's round trip to another process and back through pipes (ms), the median of
    ROUND_TRIPS, with a trusted echo process: what every request to the worker pays beyond its
    work (two process wake-ups), which no in-process measurement sees. Never measured against
    the worker, which could answer slowly to widen its own allowance."""
    echo = subprocess.Popen(
        [sys.executable, "-S", "-c", ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert echo.stdin is not None and echo.stdout is not None
    trips = []
    try:
        for _ in range(ROUND_TRIPS):
            started = time.perf_counter()
            os.write(echo.stdin.fileno(), b"x")
            os.read(echo.stdout.fileno(), 1)
            trips.append((time.perf_counter() - started) * 1000)
    finally:
        echo.kill()
        echo.wait()
    return statistics.median(trips)


def _null_check(
    inputs: list[Any],
    outputs: list[torch.Tensor],
    device: torch.device,
    arena: Any,
    guard: runtime.Guard,
) -> float:
    """One check round's harness work around a call that returns `outputs` (ms), from the
    request's sending on (the supervisor packs the inputs before its clock starts)."""
    if arena is not None:
        payload = feed.pack_device([inputs], arena, random.Random(0))
    else:
        payload = feed.pack_pipe([inputs])
    started = time.perf_counter()
    sent, frame = _framed(payload.fields, payload.tensors)
    given, storages = feed.unpack(sent, frame, device, arena)
    runtime.poison_allocator([o.nbytes for o in outputs], device)
    with guard.observe(None):
        captured = [o.clone() for o in outputs]  # the capture when the call returns
    guard.check()
    if arena is not None:
        torch.cuda.synchronize(device)
        copies = [o.clone() for o in captured]
        torch.cuda.synchronize(device)
    else:
        _, copies = _framed({"op": "check", "inputs_after": len(storages)}, captured + storages)
    del copies, given
    return (time.perf_counter() - started) * 1000


def _framed(header: dict[str, Any], tensors: list[torch.Tensor]) -> tuple[dict, list]:
    """`header` and `tensors` written as a frame and read back (what a pipe's ends do)."""
    frame = io.BytesIO()
    protocol.send(frame, header, tensors)
    frame.seek(0)
    return protocol.recv(frame)
