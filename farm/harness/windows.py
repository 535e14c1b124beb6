"""The supervisor's side of timing: windows it sizes at random and times from outside, and
re-checked calls it names only after they ran (the design is in farm.harness.timing)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from farm.harness import host_load, replies
from farm.harness.budget import LimitPolicy
from farm.harness.channel import WorkerProcess
from farm.harness.feed import Payload
from farm.harness.timing import TimingPolicy, stop_rule
from farm.harness.timing_stats import Measured, WindowRecord
from farm.result import Finding, Reason, WorkloadStatus

RECHECKS = 8  # timed calls re-checked per timing, about (one per window when windows are long)
MIN_RECHECKS = 3  # at least, from the last window when the draws gave fewer
BUDGET_SLACK = 0.1  # a window may end this fraction of the budget past it
# A pick reply only hands over outputs the worker kept when each call's timer stopped, so its
# turnaround is bounded by a fixed cost (the request's round trip, a scheduler slice on a loaded
# host, a GC pass in the worker) and the bytes at a rate no honest pipe falls below (the worker
# copies the outputs to the CPU and writes them to a pipe, which runs at GB/s; 100 MB/s is ten
# times below that). Computing a picked call only when asked shows as a late reply.
PICKS_FIXED_MS = 100.0
PICKS_MIN_BYTES_PER_MS = 100e6 / 1000
# Checks one re-checked call: (call index, its outputs) -> errors (empty when correct).
Verify = Callable[[int, list[torch.Tensor]], list[Reason]]
# The inputs of the calls of these indices, made by the trusted side, as a request carries them.
Feed = Callable[[list[int]], Payload]
WARMUP_INPUTS = 8  # distinct input sets the warm-up's calls cycle through, at most


class PickTransport(Protocol):
    """How the outputs of picked calls reach the trusted side (the supervisor's choice: left on
    the device and copied by CUDA IPC, or through the pipe)."""

    def fields(self) -> dict[str, Any]:
        """What a pick request adds to say how the outputs should come."""
        ...

    def receive(
        self, outputs: replies.DeviceOutputs, tensors: list[torch.Tensor], picks: list[int]
    ) -> list[torch.Tensor] | None:
        """The picked calls' outputs as the trusted side's own tensors, from what the reply
        says of those on the device and its frame's `tensors`; None when the hand-off failed
        and the transport changed, so the same calls must be asked for again."""
        ...


@dataclass
class TimedRun:
    """What one timing produced: a failure, wrong re-checked outputs (`errors`), or times."""

    failure: replies.Failure | None = None
    errors: list[Reason] = field(default_factory=list)
    times_ms: list[float] = field(default_factory=list)
    event_ms: list[float] = field(default_factory=list)
    method: str = ""
    warmup_calls: int = 0
    windows: list[WindowRecord] = field(default_factory=list)
    rechecked: list[int] = field(default_factory=list)
    picks_ms: list[float] = field(default_factory=list)  # each pick reply's turnaround
    sim: dict[str, Any] | None = None
    findings: list[Finding] = field(default_factory=list)
    wall_ms: float = 0.0  # the whole request sequence, warm-up included (supervisor's clock)
    warmup_wall_ms: float = 0.0  # of which the warm-up request
    verify_s: float = 0.0  # of which spent checking re-checked outputs (not timing)

    def window_means(self) -> list[float]:
        return [w.sum_ms / w.calls for w in self.windows]

    def summary(self) -> Measured:
        """What the timing measured, as the result records it (farm.harness.timing_stats)."""
        return Measured(
            times_ms=self.times_ms,
            event_ms=self.event_ms,
            method=self.method,
            windows_ms=self.window_means(),
            windows=list(self.windows),
            rechecked=self.rechecked,
            picks_ms=self.picks_ms,
            warmup_calls=self.warmup_calls,
            warmup_wall_ms=self.warmup_wall_ms,
            sim=self.sim,
        )


@dataclass
class WindowDriver:
    """Drives one workload's timing in one worker. `call_s`: the trusted wall time of one of its
    checks (s), the yardstick of the first requests' limits; `keep_calls`: the most calls whose
    outputs a window may keep (the memory budget over the outputs' bytes); `pick_bytes`: the
    most tensor bytes one call's outputs may carry; `simulated`: one call is the measurement."""

    worker: WorkerProcess
    policy: TimingPolicy
    limits: LimitPolicy
    rng: random.Random
    call_s: float
    keep_calls: int
    pick_bytes: int
    watch: int | None = None
    simulated: bool = False
    transport: PickTransport | None = None  # None: the pipe
    feed: Feed | None = None  # each request's inputs (farm.harness.feed); None: none sent
    feed_calls: int = 1 << 16  # the most calls whose inputs one request may carry

    def run(self, request: dict[str, Any], verify: Verify | None = None) -> TimedRun:
        """Warm up, then windows until the stop rule or the budget (`budget_ms` of windows after
        the warm-up) ends it; with `verify`, one call of each window, drawn after the window
        ran, is re-checked now and then (`_draw`; that check's time is not the budget's)."""
        run = TimedRun()
        warm = self._inputs([-1 - i for i in range(min(WARMUP_INPUTS, self.feed_calls))])
        started = time.perf_counter()
        header, _ = self.worker.request(
            {"op": "time", **request, **warm.fields},
            timeout=self.limits.warmup_seconds(self.policy, self.call_s),
            max_bytes=0,
            watch=self.watch,
            tensors=warm.tensors,
        )
        warm_s = time.perf_counter() - started
        run.warmup_wall_ms = warm_s * 1000
        start = replies.timing_start(header)
        run.failure, run.method, run.warmup_calls = start.failure, start.method, start.warmup_calls
        call_ms = 1000 * warm_s / max(run.warmup_calls, 1)
        windows_from = time.perf_counter()
        while run.failure is None and not run.errors and len(run.times_ms) < self.policy.max_calls:
            spent_ms = (time.perf_counter() - windows_from - run.verify_s) * 1000
            left_ms = self.policy.budget_ms - spent_ms
            slack_ms = BUDGET_SLACK * self.policy.budget_ms
            if run.windows and (self.simulated or left_ms <= 0 or call_ms > left_ms + slack_ms):
                break  # the budget is spent, or not one more call fits in it and its slack
            call_ms = self._window(run, self._size(run, call_ms, left_ms), call_ms)
            if run.failure is None and verify is not None and self._draw(run):
                self._recheck(run, verify)
            if stop_rule(run.times_ms, run.window_means(), self.policy):
                break
        short = MIN_RECHECKS - len(run.rechecked)
        if verify is not None and run.windows and short > 0 and not run.errors and not run.failure:
            self._recheck(run, verify, short)  # the last window: the worker still keeps it
        run.wall_ms = (time.perf_counter() - started - run.verify_s) * 1000
        return run

    def _size(self, run: TimedRun, call_ms: float, left_ms: float) -> int:
        """Calls in the next window: about `window_ms` x U(0.5, 1.5) of calls at the last
        window's wall per call, never past the budget left; the first window is a short probe."""
        if self.simulated:
            return 1
        target = self.policy.window_ms * self.rng.uniform(0.5, 1.5)
        target = min(target, max(left_ms, call_ms))
        room = self.policy.max_calls - len(run.times_ms)
        if not run.windows:  # a probe: the warm-up's calls are not timed the same way
            room = min(room, max(2, self.policy.min_calls // 4))
        fit = min(self.keep_calls, self.feed_calls)
        return max(1, min(int(target / max(call_ms, 1e-3)), fit, room))

    def _window(self, run: TimedRun, calls: int, call_ms: float) -> float:
        """Time one window of calls expected to take `call_ms` each; returns its wall per call
        (ms), the next window's yardstick."""
        start = len(run.times_ms)
        inputs = self._inputs(list(range(start, start + calls)))
        began = time.perf_counter()
        header, _ = self.worker.request(
            {"op": "window", "start": start, "calls": calls, **inputs.fields},
            timeout=self.limits.window_seconds(calls * call_ms, self.call_s),
            max_bytes=0,
            watch=self.watch,
            tensors=inputs.tensors,
        )
        wall_ms = (time.perf_counter() - began) * 1000
        reply = replies.window(header, calls=calls)
        run.findings += reply.findings
        if reply.failure is not None:
            run.failure = reply.failure
            return 0.0
        run.windows.append(WindowRecord(start, calls, wall_ms, sum(reply.times_ms)))
        run.times_ms += reply.times_ms
        run.event_ms += reply.event_ms
        run.sim = run.sim or reply.sim
        return wall_ms / calls

    def _inputs(self, indices: list[int]) -> Payload:
        """The inputs of these calls as the trusted side made them (none without a feed)."""
        return self.feed(indices) if self.feed is not None else Payload({}, [])

    def _late(self, turnaround_ms: float, tensors: list[torch.Tensor]) -> replies.Failure | None:
        """LATE_PICKS when a pick reply took longer than handing over kept outputs can
        (`picks_bound_ms` of the bytes its frame carried when the supervisor asked for them
        through the pipe; none when it asked for them on the device, where the reply carries only
        their handles); HOST_BUSY (INCONCLUSIVE) instead when the host was contended
        (farm.harness.host_load). Simulated devices are exempt: their times are the simulator's,
        not the wall clock's (the supervisor's knowledge, not a label)."""
        nbytes = sum(t.nbytes for t in tensors)
        bound = picks_bound_ms(nbytes)
        if self.simulated or turnaround_ms <= bound:
            return None
        detail = (
            f"the outputs of the re-checked calls came {turnaround_ms:.1f} ms after they were "
            f"asked for; handing over {nbytes} bytes of outputs kept when each call ended takes "
            f"at most {bound:.1f} ms"
        )
        host = host_load.sample()  # a late reply on a contended host says nothing of the kernel
        if host.busy:
            detail = f"the host was busy ({host.describe()}) when {detail}: measure again"
            return replies.Failure("HOST_BUSY", WorkloadStatus.INCONCLUSIVE, detail)
        detail += ": the calls were computed only when asked for"
        return replies.Failure("LATE_PICKS", WorkloadStatus.REJECTED, detail)

    def _draw(self, run: TimedRun) -> bool:
        """Whether to re-check a call of the window that just ran: with the probability that
        gives about RECHECKS re-checks over the budget's windows (every window when they are
        long; the last window when none was), drawn after the window ran, so the worker cannot
        know it while the calls run."""
        mean_wall = sum(w.wall_ms for w in run.windows) / len(run.windows)
        rate = RECHECKS * mean_wall / max(self.policy.budget_ms, 1e-3)
        return self.rng.random() < rate

    def _recheck(self, run: TimedRun, verify: Verify, count: int = 1) -> None:
        """Name `count` calls of the window that just ran (not re-checked yet) and check the
        outputs it kept for them."""
        last = run.windows[-1]
        fresh = [i for i in range(last.start, last.start + last.calls) if i not in run.rechecked]
        picks = sorted(self.rng.sample(fresh, k=min(count, len(fresh))))
        if not picks:
            return
        max_bytes = self.pick_bytes * len(picks)
        # through the pipe, the bytes' transfer is part of the reply's time (picks_bound_ms)
        timeout = self.limits.call_seconds(self.call_s * len(picks), first=False)
        timeout += picks_bound_ms(max_bytes) / 1000
        outputs: list[torch.Tensor] | None = None
        while outputs is None:  # twice at most: a failed device hand-off turns to the pipe
            fields = self.transport.fields() if self.transport else {}
            piped = not fields  # the supervisor's choice for this request, not the reply's
            asked = time.perf_counter()
            header, tensors = self.worker.request(
                {"op": "picks", "calls": picks, **fields},
                timeout=timeout,
                max_bytes=max_bytes,
                watch=self.watch,
            )
            turnaround_ms = (time.perf_counter() - asked) * 1000
            began = time.perf_counter()
            on_device = replies.device_outputs(header)
            outputs = (
                self.transport.receive(on_device, tensors, picks) if self.transport else tensors
            )
            run.verify_s += time.perf_counter() - began
        run.picks_ms.append(turnaround_ms)
        picked = replies.picks(header, asked=picks, tensors=len(outputs))
        # outputs asked for on the device carry no transfer allowance, however they came
        run.failure = picked.failure or self._late(turnaround_ms, tensors if piped else [])
        if run.failure is not None:
            return
        began = time.perf_counter()
        offset = 0
        for index, n in zip(picks, picked.counts):
            run.rechecked.append(index)
            run.errors = verify(index, outputs[offset : offset + n])
            offset += n
            if run.errors:
                break
        run.verify_s += time.perf_counter() - began


def picks_bound_ms(nbytes: int) -> float:
    """The longest turnaround (ms) of a pick reply carrying `nbytes` bytes of kept outputs."""
    return PICKS_FIXED_MS + nbytes / PICKS_MIN_BYTES_PER_MS
