"""Reading a timing window's profiler trace: which device activities belong to which call.

A call's time is the span from the first device activity after its start marker (the L2 flush)
to the last one before its end marker (farm.harness.timing). Which kernels are the markers is
decided by provenance, never by name: a submission can name a kernel `farm_l2_flush` (on an
H100 a kernel so named restarted the timed span, and a 0.64x claim PASSED), but it cannot make
a launch the harness made. So:

- the harness records, around each marker launch, what it launched and when (`Mark`: the kind
  and a monotonic-clock bracket, farm.harness.markers);
- the profiler records every launch as a host-side runtime/driver API event (cudaLaunchKernel,
  cuLaunchKernelEx, hipModuleLaunchKernel, ...) carrying the correlation id of the device
  activity it started (`Launch`, `Activity`);
- each mark is matched to the launch event inside its bracket (`_own_launches`; the two clocks'
  offset is found from the marks themselves, `_offset`: the profiler's clock is its own), and its
  marker is the device activity with that launch's correlation id. The name is only checked on
  what was matched (a match whose kernel is not the marker means the clocks did not line up).

Outcomes of `_spans`: with every mark matched, one span per call (ms), or a failure (`forged`:
status REJECTED, code FORGED_MARKER) when a kernel named like a marker was not launched by the
harness. Where the launch records do not cover every mark (a profiler that misses launches, or
clocks that do not line up: not the submission's doing), nothing is accused: the markers are read
by name only where flush and end alternate as the harness launches them (`_by_name`), else the
result is an empty list and the timer falls back to the events on its own stream, which a
kernel's name cannot move.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

FLUSH_KERNEL = "farm_l2_flush"
END_KERNEL = "farm_call_end"
# How far (ns) a mark's launch record may lie outside the mark's bracket once the clocks'
# offset is taken out (`_offset`): what remains is the clocks' drift over a window and the
# conversion's jitter (microseconds); the nearest record wins, so a wide tolerance does not let
# a later launch of the submission's take a mark's place.
MATCH_TOLERANCE_NS = 200_000
# The clocks' offset is found from this many of the window's first launch records and this many
# of its first marks (a window holds hundreds of marks: using all would cost more than the rest
# of the window's reading).
OFFSET_CANDIDATES = 1024
OFFSET_PROBES = 16


def forged(detail: str) -> Exception:
    """The failure a forged trace raises in the worker: status REJECTED, code FORGED_MARKER, as
    farm.harness.simtimer.SimFailure, the worker's coded failure whose status and code the
    supervisor reads from the reply (imported here: simtimer imports timing, which imports this
    module)."""
    from farm.harness.simtimer import SimFailure

    return SimFailure("REJECTED", "FORGED_MARKER", detail)


@dataclass(frozen=True)
class Mark:
    """One marker launch as the harness made it: `kind` (FLUSH_KERNEL or END_KERNEL) and the
    monotonic clock (time.perf_counter_ns) just before and just after the launch call."""

    kind: str
    before_ns: int
    after_ns: int


@dataclass(frozen=True)
class Activity:
    """A device activity (kernel, memcpy, memset): start and end (ns), name, correlation id."""

    start_ns: int
    end_ns: int
    name: str
    correlation: int


@dataclass(frozen=True)
class Launch:
    """A host-side API record of the profiler's (ns, its own clock) and its correlation id."""

    start_ns: int
    correlation: int


@dataclass
class Trace:
    """What one window left: device activities, host launch records, the harness's marks."""

    activities: list[Activity]
    launches: list[Launch]
    marks: list[Mark] = field(default_factory=list)


_MARKS: list[Mark] = []  # the marks of the window being timed (reset when its profiler starts)


def record(mark: Mark) -> None:
    """Keep a marker launch the harness just made (farm.harness.markers)."""
    _MARKS.append(mark)


def _profiler() -> Any:
    """A CUDA/ROCm profiler for one window; the window's marks start empty."""
    from torch.profiler import ProfilerActivity, profile

    _MARKS.clear()
    return profile(activities=[ProfilerActivity.CUDA])


def _activities(prof: Any) -> Trace:
    """The device activities and host launch records of a finished profile, read from the raw
    Kineto results (torch's `prof.events()` first builds the whole function-event tree, whose
    cost grows with the trace: seconds per window of a few hundred kernels), and the window's
    marks. Host records are kept only where a device activity shares their correlation id."""
    import torch

    device = torch.autograd.DeviceType.CUDA
    events = list(prof.profiler.kineto_results.events())
    activities = [
        Activity(e.start_ns(), e.end_ns(), e.name(), e.correlation_id())
        for e in events
        if e.device_type() == device
    ]
    ids = {a.correlation for a in activities if a.correlation}
    launches = [
        Launch(e.start_ns(), e.correlation_id())
        for e in events
        if e.device_type() != device and e.correlation_id() in ids
    ]
    return Trace(activities, launches, list(_MARKS))


def _spans(trace: Trace) -> list[float]:
    """Per-call spans (ms) between the harness's own markers, over every device activity; []
    when the trace cannot say. Raises `forged(...)` (see the module docstring)."""
    own = _own_launches(trace)
    if own is None:
        named = _by_name(trace.activities)
        return _sweep(trace.activities, named) if named is not None else []
    strays = [
        a
        for a in trace.activities
        if (FLUSH_KERNEL in a.name or END_KERNEL in a.name) and a.correlation not in own
    ]
    if strays:
        raise forged(
            f"{len(strays)} kernel(s) named like the harness's markers ({strays[0].name!r}, "
            f"device time {strays[0].start_ns} ns) were not launched by the harness: the "
            "submission launched them to move the timed span"
        )
    return _sweep(trace.activities, own)


def _sweep(activities: Sequence[Activity], own: dict[int, str]) -> list[float]:
    """Spans (ms) from the first activity after each own flush to the last before its end."""
    spans: list[float] = []
    inside, first, last = False, math.inf, -math.inf
    for a in sorted(activities, key=lambda a: (a.start_ns, a.end_ns)):
        kind = own.get(a.correlation)
        if kind == FLUSH_KERNEL:
            if inside:
                raise forged("two of the harness's flushes ran without an end between them")
            inside, first, last = True, math.inf, -math.inf
        elif kind == END_KERNEL:
            if not inside:
                raise forged("an end marker of the harness's ran outside any call")
            spans.append(max(last - first, 0.0) / 1e6 if first < math.inf else 0.0)
            inside = False
        elif inside:
            first, last = min(first, a.start_ns), max(last, a.end_ns)
    return spans


def _own_launches(trace: Trace) -> dict[int, str] | None:
    """{correlation id: marker kind} of the device activities the harness's marks launched;
    None when the trace cannot say (no launch records, or not one mark matched). Raises
    `forged(...)` when only some marks are in the trace."""
    if not trace.marks or not trace.launches:
        return None
    names = {a.correlation: a.name for a in trace.activities}
    launches = sorted(trace.launches, key=lambda x: x.start_ns)
    starts = [x.start_ns for x in launches]
    offset = _offset(starts, trace.marks)
    own: dict[int, str] = {}
    for mark in trace.marks:
        i = _nearest(starts, mark.before_ns + offset, mark.after_ns + offset)
        corr = launches[i].correlation if i is not None else None
        if corr is not None and corr not in own and mark.kind in names.get(corr, ""):
            own[corr] = mark.kind
    if len(own) != len(trace.marks):
        # Not every launch has its record: Triton launches through the driver API, which the
        # profiler's runtime records do not always cover (an H100 trace held 1 of 14). Without
        # provenance nothing is accused; the markers are read by name where their order is the
        # harness's alone (`_by_name`), else the window falls back to events.
        return None
    return own


def _by_name(activities: Sequence[Activity]) -> dict[int, str] | None:
    """{correlation id: marker kind} of the marker-named activities, when they alternate flush,
    end, flush, end ... as the harness launches them and nothing else is so named; None
    otherwise (a kernel named like a marker inside a call breaks the alternation: its window's
    times then come from the events on the harness's stream, which the name cannot move)."""
    marked = [
        (a, FLUSH_KERNEL if FLUSH_KERNEL in a.name else END_KERNEL)
        for a in sorted(activities, key=lambda a: (a.start_ns, a.end_ns))
        if FLUSH_KERNEL in a.name or END_KERNEL in a.name
    ]
    expected = [FLUSH_KERNEL, END_KERNEL] * (len(marked) // 2)
    if not marked or [kind for _, kind in marked] != expected:
        return None
    own = {a.correlation: kind for a, kind in marked}
    return own if len(own) == len(marked) else None


def _offset(starts: list[int], marks: Sequence[Mark]) -> int:
    """The profiler's clock minus the harness's (ns): the middle of the range of offsets under
    which the most of the window's first OFFSET_PROBES marks hold one of its first
    OFFSET_CANDIDATES launch records inside their brackets (each mark's own launch lies inside
    its bracket; the window's first calls' launches are among its first records). A sweep over
    the offsets at which a record enters or leaves a bracket; the harness's other launches (its
    input copies before each flush) repeat before flushes only, so no other offset holds both
    kinds of marks."""
    probes = marks[:OFFSET_PROBES]
    edges = sorted(
        (s - m.after_ns + side * (m.after_ns - m.before_ns), side, j)
        for j, m in enumerate(probes)
        for s in starts[:OFFSET_CANDIDATES]
        for side in (0, 1)  # 0: the record enters mark j's bracket, 1: it leaves it
    )
    inside = [0] * len(probes)
    held, best, lo, hi = 0, -1, 0, 0
    for offset, side, j in edges:
        if side == 0:
            inside[j] += 1
            held += inside[j] == 1
            if held > best:
                best, lo, hi = held, offset, offset
            continue
        if inside[j] == 1 and held == best and hi == lo:
            hi = offset  # the best range ends where its first mark loses its record
        held -= inside[j] == 1
        inside[j] -= 1
    return (lo + hi) // 2


def _nearest(
    starts: list[int], lo: int, hi: int, tolerance: int = MATCH_TOLERANCE_NS
) -> int | None:
    """Index of the launch record nearest to [lo, hi] (inside it counts as 0), within
    `tolerance` ns of it; None when there is none."""
    a = bisect.bisect_left(starts, lo - tolerance)
    b = bisect.bisect_right(starts, hi + tolerance)
    if a >= b:
        return None
    return min(range(a, b), key=lambda k: max(lo - starts[k], starts[k] - hi, 0))
