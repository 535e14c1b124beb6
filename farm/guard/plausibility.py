"""Plausibility of reported times, on the trusted side (the supervisor), after the worker replied.

Two rules, both REJECT:
- BELOW_SOL_FLOOR: a time below the workload's speed-of-light bound times the slack of
  farm.scoring (FLOOR_SLACK) is physically impossible; it is never scored.
- WALL_CLOCK_MISMATCH: the device time the worker reported must fit the wall time the supervisor
  measured around the same timed calls, once the harness's own per-call work is taken out.

The wall-clock rule, in ms over one timing request of `calls` timed calls:

    unexplained = wall_ms - calls * overhead_ms_per_call - reported_ms_total
    allowed     = WALL_RATIO * reported_ms_total
                  + overhead_ratio * overhead_ms_per_call * calls
                  + FLOOR_RATIO * floor_ms

Reject when unexplained > allowed (work hidden from the timer: side streams, background threads,
deferred or lazy computation, a patched clock), or when reported_ms_total > wall_ms *
(1 + WALL_OVER_RATIO) (more device time than elapsed time: forged numbers). Every term is a
factor times something measured, never a fixed amount of ms: the kernel's own reported time,
and a trusted yardstick (farm.harness.reference.Yardstick) of the harness's own path measured
when nothing else of the evaluation ran, `overhead_ms_per_call` per call and `floor_ms` the most
one of its requests paid beyond that (a window's round trip and the host's jitter). The
yardstick is the eager baseline timed the same way (its windows: WALL_OVERHEAD_RATIO), else the
timing loop around a call that does nothing, run by the supervisor itself (NULL_OVERHEAD_RATIO).
(Until 2026-11-27 the allowance also held 0.5 ms per call and 50 ms per window: enough to hide a
whole small kernel.) On a contended host the walls stretch for reasons that are not the
kernel's: the supervisor re-measures the yardstick before a mismatch stands, and a mismatch the
host's load explains makes the workload INCONCLUSIVE, not REJECTED (farm.harness.host_load,
farm.harness.report). WALL_OVERHEAD_RATIO: the calibration comes from another process (the
trusted baseline, which runs without the runtime guard), and on an H100 the candidate's harness
overhead per timed call measured 0.72x to 1.25x the baseline's for honest kernels
(docs/harness-fidelity.md).
"""

from __future__ import annotations

from farm.guard.findings import Finding
from farm.guard.rules import rule
from farm.scoring import FLOOR_SLACK, below_floor

WALL_RATIO = 1.0  # unexplained wall time allowed, as a multiple of the reported device time
WALL_OVER_RATIO = 0.05  # device time may exceed wall time by this fraction (clock granularity)
# plus this multiple of the yardstick's floor per request (a window's round trip, the host's
# jitter: the most one of the yardstick's own windows paid beyond its calls' share)
FLOOR_RATIO = 2.0
WALL_OVERHEAD_RATIO = 0.5  # plus this fraction of the calibrated harness overhead per call
# ... when the calibration is the timing loop around a call that does nothing, measured in the
# supervisor's own process (no baseline timed): an honest candidate's loop costs more per call
# than that one (its kernels' activities fill the profiler's trace), 0.78x to 2.26x of it over 15
# workloads of 12 honest kernels on an H100 (docs/security.md), so the margin is wider.
NULL_OVERHEAD_RATIO = 2.0


def _finding(code: str, detail: str) -> Finding:
    r = rule(code)
    return Finding(code=code, severity=r.severity, detail=f"{detail}: {r.why}")


def check_times(*, time_ms: float, sol_ms: float, slack: float = FLOOR_SLACK) -> list[Finding]:
    """BELOW_SOL_FLOOR when `time_ms` < `sol_ms` x `slack` (farm.scoring.below_floor).

    Raises ValueError for a non-positive SOL time (a broken bound, not the submission's fault).
    """
    if sol_ms <= 0:
        raise ValueError(f"sol_ms must be positive, got {sol_ms}")
    if time_ms <= 0 or below_floor(time_ms, sol_ms, slack):
        return [
            _finding(
                "BELOW_SOL_FLOOR",
                f"measured {time_ms:.6g} ms, the floor is {sol_ms * slack:.6g} ms "
                f"(SOL {sol_ms:.6g} ms x slack {slack})",
            )
        ]
    return []


def check_wall_clock(
    *,
    reported_ms_total: float,
    wall_ms: float,
    calls: int,
    overhead_ms_per_call: float,
    overhead_ratio: float = WALL_OVERHEAD_RATIO,
    floor_ms: float = 0.0,
) -> list[Finding]:
    """WALL_CLOCK_MISMATCH when the reported device time and the observed wall time cannot both
    be true (see the module docstring for the rule and its margins). All times in ms.
    `overhead_ratio`: WALL_OVERHEAD_RATIO with a baseline's calibration, NULL_OVERHEAD_RATIO with
    the supervisor's own null-call calibration; `floor_ms`: the yardstick's floor for all the
    requests together. Raises ValueError for non-positive calls or negative times."""
    if calls <= 0 or min(wall_ms, reported_ms_total, overhead_ms_per_call, floor_ms) < 0:
        raise ValueError("calls must be positive and times non-negative")
    ceiling = wall_ms * (1 + WALL_OVER_RATIO)
    if reported_ms_total > ceiling:
        return [
            _finding(
                "WALL_CLOCK_MISMATCH",
                f"{calls} calls reported {reported_ms_total:.6g} ms of device time in "
                f"{wall_ms:.6g} ms of wall time",
            )
        ]
    unexplained = wall_ms - calls * overhead_ms_per_call - reported_ms_total
    allowed = _allowed(reported_ms_total, calls, overhead_ms_per_call, overhead_ratio, floor_ms)
    if unexplained > allowed:
        return [
            _finding(
                "WALL_CLOCK_MISMATCH",
                f"{calls} calls reported {reported_ms_total:.6g} ms but took {wall_ms:.6g} ms of "
                f"wall time; {unexplained:.6g} ms is unaccounted for (allowed {allowed:.6g} ms)",
            )
        ]
    return []


def _allowed(
    reported_ms: float, calls: int, per_call_ms: float, ratio: float, floor_ms: float
) -> float:
    """The unexplained wall time (ms) the rule allows (see the module docstring)."""
    return WALL_RATIO * reported_ms + ratio * per_call_ms * calls + FLOOR_RATIO * floor_ms


# windows that fit, at least, beside the one window over its allowance that is put down to a
# pause of the host (check_windows): on two H200s of one host, each with a warm pool preparing
# workers beside the timed evaluation, 3 of 192 honest evaluations were rejected for a window
# whose unaccounted wall time was 63-92 ms against an allowance of 58-64 ms (docs/security.md)
STALL_WINDOWS = 2


def check_windows(
    windows: list[tuple[int, float, float]],
    *,
    overhead_ms_per_call: float,
    overhead_ratio: float = WALL_OVERHEAD_RATIO,
    floor_ms: float = 0.0,
) -> list[Finding]:
    """WALL_CLOCK_MISMATCH for timing windows the supervisor sized and timed itself, each given
    as (calls, wall ms, sum of the reported call times in ms). Every window on its own: the
    reported times may not exceed its wall (by more than WALL_OVER_RATIO), and its wall may not
    exceed them by more than `check_wall_clock` allows with the yardstick's `floor_ms` (ms) for
    the one request; then all windows together, with the floor once per window. A window's size
    is unknown to the worker until it starts, so no reported time can be moved from one window
    into another.

    One window whose wall alone is over, among at least STALL_WINDOWS that fit, is a pause of
    the host (a scheduler or driver stall of tens of ms, seen on loaded GPU nodes), not hidden
    work, which recurs with the calls that hide it: it is WALL_CLOCK_STALL, a flag. It gains a
    submission nothing: the scored time comes from the calls' device spans
    (farm.scoring.scored_time), which a pause of the host does not lengthen, and the total over
    the other windows still holds."""
    over: list[tuple[int, str]] = []  # each window over its allowance: its index, what it took
    timed = [(c, w, t) for c, w, t in windows if c > 0]
    for i, (calls, wall_ms, sum_ms) in enumerate(timed):
        if sum_ms > wall_ms * (1 + WALL_OVER_RATIO):
            return [
                _finding(
                    "WALL_CLOCK_MISMATCH",
                    f"a window of {calls} calls reported {sum_ms:.6g} ms of device time in "
                    f"{wall_ms:.6g} ms of wall time",
                )
            ]
        unexplained = wall_ms - calls * overhead_ms_per_call - sum_ms
        allowed = _allowed(sum_ms, calls, overhead_ms_per_call, overhead_ratio, floor_ms)
        if unexplained > allowed:
            over.append(
                (
                    i,
                    f"a window of {calls} calls reported {sum_ms:.6g} ms but took {wall_ms:.6g} "
                    f"ms of wall time; {unexplained:.6g} ms is unaccounted for "
                    f"(allowed {allowed:.6g} ms)",
                )
            )
    if len(over) > 1 or (over and len(timed) - 1 < STALL_WINDOWS):
        more = f" ({len(over)} windows over)" if len(over) > 1 else ""
        return [_finding("WALL_CLOCK_MISMATCH", over[0][1] + more)]
    stalled = [_finding("WALL_CLOCK_STALL", over[0][1])] if over else []
    rest = [w for i, w in enumerate(timed) if not over or i != over[0][0]]  # the pause forgiven
    if not rest:
        return stalled
    return stalled + check_wall_clock(
        reported_ms_total=sum(s for _, _, s in rest),
        wall_ms=sum(w for _, w, _ in rest),
        calls=sum(c for c, _, _ in rest),
        overhead_ms_per_call=overhead_ms_per_call,
        overhead_ratio=overhead_ratio,
        floor_ms=floor_ms * len(rest),
    )


# The check-wall rule (a lower bound, where the window rules bound reported times from above).
# Every correctness round is a call whose outputs the supervisor verified, timed by it from
# sending the request to holding the outputs, so a kernel's real time T is at most that wall
# minus the check path's own cost (the worker making the inputs, cloning and comparing them,
# poisoning the outputs' blocks, the guard's bookkeeping, the outputs' hand-off). The warmest
# round (the least wall after the first, which pays compilation) is held against the scored time:
#
#     min(walls after the first) - CHECK_OVERHEAD_RATIO * overhead_ms - CHECK_FLOOR_RATIO * floor_ms
#         <= CHECK_WALL_RATIO * reported_ms
#
# `overhead_ms` is the check path around a call that does nothing, measured by the supervisor in
# its own process (farm.harness.reference.check_yardstick, the least of its runs). `floor_ms` is
# measured too: the spread of those runs plus the floor of the timing yardstick (the most one
# trusted request paid beyond its calls: the round trip, a scheduler slice, the host's jitter).
# CHECK_OVERHEAD_RATIO: the worker pays the path with the runtime guard's bookkeeping and a
# process switch on top. CHECK_FLOOR_RATIO: a check round is not run with the collector off.
# CHECK_WALL_RATIO: a checked call runs once, after a reply, where timed calls run back to back;
# honest CPU solutions measured up to 1.3x (docs/security.md). A submission that claims times for
# calls it never ran (tiny times, windows it answers itself) must still run the checked calls: it
# is caught when its real time exceeds twice its claim by more than the allowance. (Until
# 2026-11-27 the floor was a fixed 25 ms.)
CHECK_WALL_RATIO = 2.0
CHECK_OVERHEAD_RATIO = 2.0
CHECK_FLOOR_RATIO = 5.0  # the floor is one round trip; a shared 2-core host jitters by several


def check_check_walls(
    *, walls_ms: list[float], reported_ms: float, overhead_ms: float, floor_ms: float
) -> list[Finding]:
    """CHECK_WALL_MISMATCH when the warmest checked call's wall (`walls_ms`, one per round, the
    supervisor's clock), less the allowance for the check path (`overhead_ms` and `floor_ms`,
    trusted), exceeds CHECK_WALL_RATIO x `reported_ms` (the scored time). All times in ms; with
    one round or none, there is no warm round and no finding. Raises ValueError for negative
    times."""
    if min(reported_ms, overhead_ms, floor_ms) < 0:
        raise ValueError("times must be non-negative")
    warm = walls_ms[1:]
    if not warm:
        return []
    allowance = CHECK_OVERHEAD_RATIO * overhead_ms + CHECK_FLOOR_RATIO * floor_ms
    least = min(warm)
    if least - allowance <= CHECK_WALL_RATIO * reported_ms:
        return []
    return [
        _finding(
            "CHECK_WALL_MISMATCH",
            f"the fastest checked call took {least:.6g} ms of wall time, {least - allowance:.6g} "
            f"ms beyond the check path's allowance of {allowance:.6g} ms, against a reported "
            f"{reported_ms:.6g} ms per call (at most {CHECK_WALL_RATIO}x that)",
        )
    ]
