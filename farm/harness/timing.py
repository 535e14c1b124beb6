"""Timing inside the worker.

GPU method (CUDA and ROCm), per call: fresh inputs are made, a Triton kernel named
`farm_l2_flush` overwrites a buffer at least four times the last-level cache (start marker), the
candidate runs, the device is synchronised (every stream), and a tiny `farm_call_end` kernel
marks the end. The profiler (CUPTI / roctracer through torch.profiler) records every kernel,
memcpy and memset on every stream; a call's time is the span from the first activity after its
flush to the last one before its end marker. CUDA events on the current stream are recorded too,
as a cross-check (side-stream work shows as span >> event time).

Calls are taken in windows. Measuring stops when at least `min_calls` were taken, the relative
standard error of the mean is below `target_rse`, and the medians of the last `stable_windows`
windows agree within `stable_tol` (the clock has settled), or when the time budget runs out.
Before measuring, calls run for `warmup_ms` so clocks and caches reach their working state.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

FLUSH_KERNEL = "farm_l2_flush"
END_KERNEL = "farm_call_end"


@dataclass(frozen=True)
class TimingPolicy:
    """How long and how often to time one workload (ms are wall-clock milliseconds)."""

    warmup_ms: float = 300.0
    min_calls: int = 30
    max_calls: int = 20000
    window: int = 50
    target_rse: float = 0.001
    stable_windows: int = 4
    stable_tol: float = 0.004
    budget_ms: float = 4000.0
    idle_ratio: float = 0.0  # after each call, stay idle this multiple of its time (duty cycle)

    @classmethod
    def for_device(cls, device: str, **overrides: Any) -> TimingPolicy:
        base = cls() if device in ("cuda", "rocm") else cls(warmup_ms=50, window=10, budget_ms=1500)
        return cls(**{**base.__dict__, **overrides})


@dataclass
class TimingRun:
    """Per-call times in ms (what scores use) and the cross-check times from events."""

    times_ms: list[float]
    event_ms: list[float] = field(default_factory=list)
    method: str = ""
    windows: list[float] = field(default_factory=list)  # median of each window, ms
    wall_ms: float = 0.0
    warmup_calls: int = 0
    rechecks: dict[int, Any] = field(default_factory=dict)  # call index -> outputs
    sim: dict[str, Any] | None = None


MakeInputs = Callable[[int], Sequence[torch.Tensor]]
Call = Callable[[Sequence[torch.Tensor]], Any]


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


class GpuTimer:
    """Times calls on a CUDA/ROCm device with the profiler (all streams) and events."""

    def __init__(self, device: torch.device, llc_bytes: int) -> None:
        self.device = device
        flush_bytes = max(256 << 20, 4 * llc_bytes)
        self.flush_buf = torch.empty(flush_bytes // 4, dtype=torch.int32, device=device)
        from farm.harness import markers  # compiles the marker kernels on first use

        self._flush, self._end = markers.flush_l2, markers.call_end
        self.profiler_ok = True

    def flush(self) -> None:
        self._flush(self.flush_buf)

    def end_marker(self) -> None:
        self._end(self.flush_buf)

    def run(
        self,
        call: Call,
        make_inputs: MakeInputs,
        policy: TimingPolicy,
        recheck: Collection[int] = (),
    ) -> TimingRun:
        t0 = time.perf_counter()
        warm = self._warmup(call, make_inputs, policy)
        run = TimingRun(times_ms=[], method="cupti-span+events", warmup_calls=warm)
        deadline = t0 + policy.budget_ms / 1000
        index = 0
        while len(run.times_ms) < policy.max_calls:
            spans, events = self._window(call, make_inputs, index, policy, recheck, run)
            index += policy.window
            run.times_ms += spans
            run.event_ms += events
            run.windows.append(statistics.median(spans))
            if index > max(recheck, default=-1) and (
                stop_rule(run.times_ms, run.windows, policy) or time.perf_counter() > deadline
            ):
                break
        run.wall_ms = (time.perf_counter() - t0) * 1000
        if not self.profiler_ok:
            run.method = "events"
        return run

    def _warmup(self, call: Call, make_inputs: MakeInputs, policy: TimingPolicy) -> int:
        end = time.perf_counter() + policy.warmup_ms / 1000
        n = 0
        while n < 3 or time.perf_counter() < end:
            inputs = make_inputs(-1 - n)
            self.flush()
            call(inputs)
            torch.cuda.synchronize(self.device)
            n += 1
        return n

    def _window(
        self,
        call: Call,
        make_inputs: MakeInputs,
        start: int,
        policy: TimingPolicy,
        recheck: Collection[int],
        run: TimingRun,
    ) -> tuple[list[float], list[float]]:
        n, idle_ratio = policy.window, policy.idle_ratio
        evs = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(n)
        ]
        prof = _profiler() if self.profiler_ok else None
        if prof is not None:
            prof.__enter__()
        for i in range(n):
            inputs = make_inputs(start + i)
            self.flush()
            evs[i][0].record()
            out = call(inputs)
            evs[i][1].record()
            torch.cuda.synchronize(self.device)
            self.end_marker()
            if idle_ratio > 0:
                time.sleep(evs[i][0].elapsed_time(evs[i][1]) * idle_ratio / 1000)
            if start + i in recheck:
                run.rechecks[start + i] = out
            del out
        torch.cuda.synchronize(self.device)
        events = [a.elapsed_time(b) for a, b in evs]
        if prof is None:
            return events, events
        prof.__exit__(None, None, None)
        spans = _spans(prof)
        if len(spans) != n:
            self.profiler_ok = False  # the trace is unusable here: fall back to events
            return events, events
        return spans, events


def _profiler():  # type: ignore[no-untyped-def]
    from torch.profiler import ProfilerActivity, profile

    return profile(activities=[ProfilerActivity.CUDA])


def _spans(prof) -> list[float]:  # type: ignore[no-untyped-def]
    """Per-call spans (ms) between flush and end markers, over every GPU activity."""
    acts = sorted(
        (
            (e.time_range.start, e.time_range.end, e.name)
            for e in prof.events()
            if e.device_type == torch.autograd.DeviceType.CUDA
        ),
    )
    spans: list[float] = []
    inside, first, last = False, math.inf, -math.inf
    for start, end, name in acts:
        if FLUSH_KERNEL in name:
            inside, first, last = True, math.inf, -math.inf
        elif END_KERNEL in name:
            if inside:
                spans.append(max(last - first, 0.0) / 1000.0 if first < math.inf else 0.0)
            inside = False
        elif inside:
            first, last = min(first, start), max(last, end)
    return spans


class CpuTimer:
    """Wall-clock timing on the CPU (development device): perf_counter_ns around each call."""

    def __init__(self, llc_bytes: int = 64 << 20) -> None:
        self.flush_buf = torch.empty(llc_bytes // 4, dtype=torch.int32)

    def run(
        self,
        call: Call,
        make_inputs: MakeInputs,
        policy: TimingPolicy,
        recheck: Collection[int] = (),
    ) -> TimingRun:
        t0 = time.perf_counter()
        end = t0 + policy.warmup_ms / 1000
        warm = 0
        while warm < 2 or time.perf_counter() < end:
            call(make_inputs(-1 - warm))
            warm += 1
        run = TimingRun(times_ms=[], method="wall-clock", warmup_calls=warm)
        deadline = t0 + policy.budget_ms / 1000
        index = 0
        while len(run.times_ms) < policy.max_calls:
            window = [
                self._one(call, make_inputs, index + i, recheck, run) for i in range(policy.window)
            ]
            index += policy.window
            run.times_ms += window
            run.windows.append(statistics.median(window))
            if index > max(recheck, default=-1) and (
                stop_rule(run.times_ms, run.windows, policy) or time.perf_counter() > deadline
            ):
                break
        run.event_ms = list(run.times_ms)
        run.wall_ms = (time.perf_counter() - t0) * 1000
        return run

    def _one(
        self, call: Call, make_inputs: MakeInputs, i: int, recheck: Collection[int], run: TimingRun
    ) -> float:
        inputs = make_inputs(i)
        self.flush_buf.fill_(i)
        t = time.perf_counter_ns()
        out = call(inputs)
        dt = (time.perf_counter_ns() - t) / 1e6
        if i in recheck:
            run.rechecks[i] = out
        return dt
