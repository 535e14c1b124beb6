"""Timing: the worker measures calls in windows whose size the supervisor chose.

Who decides what. The supervisor (trusted) drives timing one window at a time
(farm.harness.windows): it asks for a warm-up, then for "window of n calls starting at call
index i", with n drawn from its own random generator and sized from its own clock, so the worker
learns a window's size only when the window starts. It times every window from outside (send to
reply), and the times the worker reports must fit that wall: the sum of a window's calls may not
exceed its wall, and the wall may not exceed that sum by more than a bounded harness overhead per
call plus a fixed cost (farm.harness.report.wall_clock_findings, farm.guard.plausibility). Windows
last `window_ms` x U(0.5, 1.5) (at most the budget left), so kernel time dominates the fixed
costs. The stop rule (`stop_rule`: `min_calls` calls, relative standard error of the mean below
`target_rse`, the last `stable_windows` window means within `stable_tol`) and the budget
(`budget_ms` of windows after the `warmup_ms` warm-up) are applied by the supervisor after each
window, on the reported times, which the wall checks hold to the truth.

What a timed call returns. Each output is captured (cloned by harness code, outside any torch
function or dispatch mode the submission installed, with the cyclic garbage collector off so
that no finaliser runs in between) the moment its timer stops, before any code the submission
can reach runs. The worker keeps every call's capture of the current window (`Window.outputs`);
after the window's reply the supervisor draws whether to re-check one of its calls and which
(about eight per timing, at least three, the last ones from the last window), asks for those
captures and checks them itself. So re-checked calls come from all timed calls, and nothing the
worker sees while a call runs tells a checked call from an unchecked one. The kept captures of a
window must fit the workload's memory budget: the supervisor caps n by the outputs' bytes
(farm.harness.budget.LimitPolicy.keep_calls).

The score is the trimmed mean of the calls (farm.scoring.TimingStats) unless the windows' mean
call time is higher by more than 10 % (farm.harness.report.scored_time): a periodic slow call (a
batched fix-up every k-th call) cannot hide behind the trim.

GPU method (CUDA and ROCm), per call: fresh inputs are made and moved to a place in device
memory drawn for the call (`Placement`: a short kernel's time depends on it), a Triton kernel named
`farm_l2_flush` overwrites a buffer at least four times the last-level cache (start marker), the
candidate runs, the device is synchronised (every stream), and a tiny `farm_call_end` kernel
marks the end. The profiler (CUPTI / roctracer through torch.profiler) records every kernel,
memcpy and memset on every stream; a call's time is the span from the first activity after its
flush to the last one before its end marker. The trace is read from the profiler's raw Kineto
events (`_activities`), not from torch's function-event tree, whose construction cost seconds per
window; the reading is part of each window's wall, so the budget bounds it too. CUDA events on
the current stream are recorded as a cross-check (side-stream work shows as span >> event time).
Before measuring, calls run for `warmup_ms` so clocks and caches reach their working state.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import _disable_current_modes

from farm.hardware import kinds
from farm.harness import budget
from farm.harness.spans import _activities, _profiler, _spans


@dataclass(frozen=True)
class TimingPolicy:
    """How long and how often to time one workload (ms are wall-clock milliseconds).
    `window` is the window size of in-process runs (`run_windows`); the supervisor sizes its
    windows to last about `window_ms` instead."""

    warmup_ms: float = 300.0
    min_calls: int = 30
    max_calls: int = 20000
    window: int = 50
    window_ms: float = 400.0
    target_rse: float = 0.001
    stable_windows: int = 4
    stable_tol: float = 0.004
    budget_ms: float = 4000.0
    idle_ratio: float = 0.0  # after each call, stay idle this multiple of its time (duty cycle)
    place_inputs: bool = True  # GPU: each call's inputs at a place drawn for it (Placement)

    @classmethod
    def for_device(cls, device: str, **overrides: Any) -> TimingPolicy:
        base = (
            cls()
            if kinds.is_gpu(device)
            else cls(warmup_ms=50, window=10, window_ms=150, budget_ms=1500)
        )
        return cls(**{**base.__dict__, **overrides})


@dataclass
class Window:
    """One window's per-call times (ms), the cross-check times from events, and each call's
    outputs as captured when its timer stopped (empty lists when not kept)."""

    times_ms: list[float]
    event_ms: list[float]
    outputs: list[list[torch.Tensor]] = field(default_factory=list)
    sim: dict[str, Any] | None = None


@dataclass
class TimingRun:
    """An in-process run of windows (`run_windows`): per-call times in ms and window means."""

    times_ms: list[float]
    event_ms: list[float] = field(default_factory=list)
    method: str = ""
    windows: list[float] = field(default_factory=list)  # mean of each window, ms
    window_wall_ms: list[float] = field(default_factory=list)  # each window's wall, ms
    wall_ms: float = 0.0
    warmup_calls: int = 0


# Two calls without warm-up: what pays a timer's one-time costs (the marker kernels' JIT, the
# profiler's start-up) before anything is measured; no arena for its inputs.
ONE_TIME = TimingPolicy(
    warmup_ms=0, min_calls=1, window=2, stable_windows=1, budget_ms=0, place_inputs=False
)

MakeInputs = Callable[[int], Sequence[torch.Tensor]]
Call = Callable[[Sequence[torch.Tensor]], Any]


@contextlib.contextmanager
def harness_torch() -> Iterator[None]:
    """Run harness tensor code outside every torch function mode, tensor subclass handler and
    dispatch mode the submission may have installed (they are restored afterwards). The mode
    stacks are emptied rather than torch functions disabled, so a mode the harness code enters
    itself still works: problems make their inputs under `with device:` (torch's default-device
    mode), and inputs made anywhere else would come from another generator."""
    with torch._C.DisableTorchFunctionSubclass(), _no_function_modes(), _disable_current_modes():
        yield


@contextlib.contextmanager
def _no_function_modes() -> Iterator[None]:
    """The torch function mode stack, emptied for the block and restored after it."""
    popped = []
    while torch._C._len_torch_function_stack():
        popped.append(torch._C._pop_torch_function_stack())
    try:
        yield
    finally:
        for mode in reversed(popped):
            torch._C._push_on_torch_function_stack(mode)


def capture(outputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Copies of a call's outputs, made by harness code (see `harness_torch`). Only exact
    torch.Tensor objects are accepted (farm.harness.runtime.as_output_list checked them)."""
    with harness_torch():
        return [torch.Tensor.clone(torch.Tensor.detach(o)) for o in outputs]


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """No collection (and so no finaliser of the submission's) between a call and its capture."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def stop_rule(times: list[float], windows: list[float], policy: TimingPolicy) -> bool:
    """True when enough, stable calls were taken (see the module docstring)."""
    n = len(times)
    if n < policy.min_calls or len(windows) < policy.stable_windows:
        return False
    mean = statistics.fmean(times)
    rse = statistics.stdev(times) / math.sqrt(n) / mean if mean > 0 else 0.0
    last = windows[-policy.stable_windows :]
    mid = statistics.median(last)
    settled = mid <= 0 or (max(last) - min(last)) / mid <= policy.stable_tol
    return rse <= policy.target_rse and settled


def run_windows(
    timer: Any, call: Call, make_inputs: MakeInputs, policy: TimingPolicy, *, keep: bool = False
) -> TimingRun:
    """Warm up, then time windows of `policy.window` calls in this process until the stop rule
    or the budget ends it (outputs captured and dropped when `keep`, as the worker's are). The
    supervisor's own driver, with windows it sizes and times itself, is farm.harness.windows;
    this one serves in-process measurements."""
    t0 = time.perf_counter()
    run = TimingRun(
        times_ms=[], method=timer.method, warmup_calls=timer.warmup(call, make_inputs, policy)
    )
    deadline = t0 + policy.budget_ms / 1000
    while len(run.times_ms) < policy.max_calls:
        began = time.perf_counter()
        w = timer.window(call, make_inputs, len(run.times_ms), policy.window, policy, keep=keep)
        run.window_wall_ms.append((time.perf_counter() - began) * 1000)
        run.times_ms += w.times_ms
        run.event_ms += w.event_ms
        run.windows.append(statistics.fmean(w.times_ms))
        if stop_rule(run.times_ms, run.windows, policy) or time.perf_counter() > deadline:
            break
    run.wall_ms = (time.perf_counter() - t0) * 1000
    return run


def prime(timer: Any, device: torch.device | str) -> None:
    """Pay `timer`'s one-time costs with two calls of a trivial kernel (ONE_TIME), before
    anything is measured or the submission is imported."""
    x = torch.zeros(1024, device=device)
    run_windows(timer, lambda xs: [xs[0] + 1], lambda i: [x], ONE_TIME)


class Placement:
    """Where a timed call's inputs lie in device memory: a place drawn for every call.

    A short kernel's time depends on where its inputs lie (on an H200, a 16M-element fp32 add
    took 49.0-50.5 us and an rmsnorm over 4096 x 4096 bf16 20.1-20.3 us across 24 placements,
    docs/harness-fidelity.md). The caching allocator hands every call of a run the blocks the
    previous call freed, so one run times one placement (or two, alternating), and evaluations
    of the same kernel landed 1.2-1.9 % apart. With a place drawn per call, every run times the
    same mixture of placements, and the trimmed mean of its calls (farm.scoring.TimingStats) is
    that mixture's.

    The call's fresh inputs are copied, before the cache flush and so outside the timed span,
    into an arena that holds them plus a slack (farm.harness.budget.placement_bytes, counted in
    the worker's device memory allowance), at 4 KiB-aligned offsets: the tensors in a random
    order with random gaps, each its own storage (`_block`). Only contiguous device tensors
    without autograd that share no memory with another input are moved (their shape, dtype and
    strides stay as made); inputs of more
    than PLACE_MAX_BYTES together stay where the allocator put them (measured up to 64 MB
    tensors)."""

    ALIGN = 4096

    def __init__(self, device: torch.device) -> None:
        if device.type != "cpu" and device.index is None:  # "cuda": the current device
            device = torch.device(device.type, torch.cuda.current_device())
        self.device = device
        self.arena: torch.Tensor | None = None
        self.rng = random.Random(int.from_bytes(os.urandom(8), "little"))

    def __call__(self, inputs: Sequence[Any]) -> list[Any]:
        placed = list(inputs)
        storages = [t.untyped_storage().data_ptr() for t in placed if type(t) is torch.Tensor]
        movable = [i for i, t in enumerate(placed) if self._movable(t, storages)]
        sizes = {i: -(-placed[i].nbytes // self.ALIGN) * self.ALIGN for i in movable}
        total = sum(sizes.values())
        size = budget.placement_bytes(total)
        if not movable or size == 0:
            return placed
        if self.arena is None or self.arena.numel() < size:
            self.arena = None  # the old one is freed before the new one is made
            self.arena = torch.empty(size, dtype=torch.uint8, device=self.device)
        slack = (self.arena.numel() - total) // self.ALIGN
        cuts = sorted(self.rng.randrange(slack + 1) for _ in movable)
        self.rng.shuffle(movable)
        before = 0  # the bytes of the tensors placed ahead of this one
        for i, cut in zip(movable, cuts, strict=True):
            t, start = placed[i], cut * self.ALIGN + before
            placed[i] = self._block(start, t.nbytes).view(t.dtype).view(t.shape).copy_(t)
            before += sizes[i]
        return placed

    def _block(self, start: int, nbytes: int) -> torch.Tensor:
        """Bytes [start, start + nbytes) of the arena as a tensor whose storage is those bytes
        alone (storage offset 0, the storage's size the tensor's), as a freshly made input's is:
        an extension that reads a tensor's storage rather than its data pointer sees the same
        in a timed call as in a checked one. Through the CUDA array interface on a GPU (the
        interface object keeps the arena alive); a plain slice elsewhere."""
        assert self.arena is not None
        if self.device.type == "cpu":
            return self.arena[start : start + nbytes]
        return torch.as_tensor(_ArenaBytes(self.arena, start, nbytes), device=self.device)

    def _movable(self, t: Any, storages: list[int]) -> bool:
        """Whether `t` may move: a plain contiguous tensor on this device, without autograd,
        sharing its memory with no other input (inputs made as views of one another stay so)."""
        return (
            type(t) is torch.Tensor
            and storages.count(t.untyped_storage().data_ptr()) == 1
            and t.device == self.device
            and t.layout == torch.strided
            and not t.is_quantized
            and t.is_contiguous()
            and not t.requires_grad
            and t.nbytes > 0
        )


class _ArenaBytes:
    """Bytes of an arena, exposed through the CUDA array interface (see Placement._block)."""

    def __init__(self, arena: torch.Tensor, start: int, nbytes: int) -> None:
        self.arena = arena
        self.__cuda_array_interface__ = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "data": (arena.data_ptr() + start, False),
            "version": 2,  # no stream: the copy that fills it runs on the current stream
        }


class GpuTimer:
    """Times calls on a CUDA/ROCm device with the profiler (all streams) and events."""

    method = "cupti-span+events"

    def __init__(self, device: torch.device, llc_bytes: int) -> None:
        self.device, self.llc_bytes = device, llc_bytes
        flush_bytes = max(256 << 20, 4 * llc_bytes)
        self.flush_buf = torch.empty(flush_bytes // 4, dtype=torch.int32, device=device)
        from farm.harness import markers  # compiles the marker kernels on first use

        self._flush, self._end = markers.flush_l2, markers.call_end
        self.profiler_ok = True
        self.placement = Placement(device)

    def inputs(self, make_inputs: MakeInputs, i: int, policy: TimingPolicy) -> list[Any]:
        """Call `i`'s fresh inputs, placed for this call when the policy says so."""
        made = make_inputs(i)
        return self.placement(made) if policy.place_inputs else list(made)

    def flush(self) -> None:
        self._flush(self.flush_buf)

    def end_marker(self) -> None:
        self._end(self.flush_buf)

    def warmup(self, call: Call, make_inputs: MakeInputs, policy: TimingPolicy) -> int:
        """Run calls for `policy.warmup_ms` (at least three); returns how many ran."""
        end = time.perf_counter() + policy.warmup_ms / 1000
        n = 0
        while n < 3 or time.perf_counter() < end:
            with harness_torch():
                inputs = self.inputs(make_inputs, -1 - n, policy)
                self.flush()
            call(inputs)
            with harness_torch():
                torch.cuda.synchronize(self.device)
            n += 1
        return n

    def window(
        self,
        call: Call,
        make_inputs: MakeInputs,
        start: int,
        calls: int,
        policy: TimingPolicy,
        *,
        keep: bool = True,
    ) -> Window:
        """Time calls `start` .. `start + calls - 1`; outputs captured when `keep`."""
        evs = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(calls)
        ]
        kept: list[list[torch.Tensor]] = []
        prof = _profiler() if self.profiler_ok else None
        if prof is not None:
            prof.__enter__()
        with no_cyclic_gc():
            for i in range(calls):
                with harness_torch():  # markers too: Triton reads data_ptr(), a torch function
                    inputs = self.inputs(make_inputs, start + i, policy)
                    self.flush()
                    evs[i][0].record()
                out = call(inputs)
                with harness_torch():
                    evs[i][1].record()
                    torch.cuda.synchronize(self.device)
                    self.end_marker()
                    kept.append(capture(out) if keep else [])
                del out, inputs
                if policy.idle_ratio > 0:
                    time.sleep(evs[i][0].elapsed_time(evs[i][1]) * policy.idle_ratio / 1000)
        torch.cuda.synchronize(self.device)
        events = [a.elapsed_time(b) for a, b in evs]
        if prof is None:
            return Window(events, events, kept)
        prof.__exit__(None, None, None)
        spans = _spans(_activities(prof))
        if len(spans) != calls:
            self.profiler_ok = False  # the trace is unusable here: fall back to events
            return Window(events, events, kept)
        return Window(spans, events, kept)


class CpuTimer:
    """Wall-clock timing on the CPU (development device): perf_counter_ns around each call."""

    method = "wall-clock"

    def __init__(self, llc_bytes: int = 64 << 20) -> None:
        self.flush_buf = torch.empty(llc_bytes // 4, dtype=torch.int32)

    def warmup(self, call: Call, make_inputs: MakeInputs, policy: TimingPolicy) -> int:
        """Run calls for `policy.warmup_ms` (at least two); returns how many ran."""
        end = time.perf_counter() + policy.warmup_ms / 1000
        n = 0
        while n < 2 or time.perf_counter() < end:
            with harness_torch():
                inputs = make_inputs(-1 - n)
                self.flush_buf.fill_(n)
            call(inputs)
            n += 1
        return n

    def window(
        self,
        call: Call,
        make_inputs: MakeInputs,
        start: int,
        calls: int,
        policy: TimingPolicy,
        *,
        keep: bool = True,
    ) -> Window:
        """Time calls `start` .. `start + calls - 1`; outputs captured when `keep`."""
        times: list[float] = []
        kept: list[list[torch.Tensor]] = []
        with no_cyclic_gc():
            for i in range(start, start + calls):
                with harness_torch():
                    inputs = make_inputs(i)
                    self.flush_buf.fill_(i)
                t = time.perf_counter_ns()
                out = call(inputs)
                dt = (time.perf_counter_ns() - t) / 1e6
                kept.append(capture(out) if keep else [])
                times.append(dt)
                del out, inputs
        return Window(times, list(times), kept)
