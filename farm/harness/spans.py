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
  offset is estimated from the marks themselves, since the profiler's clock is its own), and its
  marker is the device activity with that launch's correlation id. The name is only checked on
  what was matched (a match whose kernel is not the marker means the clocks did not line up).

Outcomes of `_spans`: one span per call (ms); an empty list when the trace cannot say (the
profiler recorded no launches, or not one mark matched: a profiler or clock set-up that does not
give what is needed, not the submission's doing; the timer then falls back to events, as
before); or a failure (`forged`: status REJECTED, code FORGED_MARKER) when a marker-named kernel was
not launched by the harness, or only some of the harness's marks are in the trace.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

FLUSH_KERNEL = "farm_l2_flush"
END_KERNEL = "farm_call_end"
# How far (ns) a mark's launch record may lie outside the mark's bracket once the clocks'
# offset is taken out: the offset is the median over the window's marks, so what remains is the
# conversion's jitter (microseconds); the nearest record wins, so a wide tolerance does not let
# a later launch of the submission's take a mark's place.
MATCH_TOLERANCE_NS = 200_000
# The clocks' offset is searched among this many of the window's first launch records, scored
# on this many of its first marks (a window holds hundreds: scoring all would cost more than the
# window's other reading).
OFFSET_CANDIDATES = 256
OFFSET_PROBES = 32


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
    """The profiler's clock minus the harness's (ns). Coarse: of the offsets that put one of the
    first OFFSET_CANDIDATES launch records at the first mark's bracket (the window's first
    flush is among its first launches: only the harness's input copies come before it), the
    one under which most of the first OFFSET_PROBES marks hold a launch record. Then fine: the
    median over all marks of the distance from a mark's bracket middle to the nearest record
    (each mark's own launch lies inside its bracket; the submission's launches come after the
    harness's code returns)."""
    first = marks[0]
    coarse = max(
        (s - first.before_ns for s in starts[:OFFSET_CANDIDATES]),
        key=lambda d: sum(
            _nearest(starts, m.before_ns + d, m.after_ns + d, 0) is not None
            for m in marks[:OFFSET_PROBES]
        ),
    )
    gaps = []
    for mark in marks:
        middle = (mark.before_ns + mark.after_ns) // 2 + coarse
        j = bisect.bisect_left(starts, middle)
        near = [starts[k] for k in (j - 1, j) if 0 <= k < len(starts)]
        gaps.append(min(near, key=lambda s: abs(s - middle)) - middle)
    return coarse + int(statistics.median(gaps))


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
