"""Plausibility of reported times, on the trusted side (the supervisor), after the worker replied.

Two rules, both REJECT:
- BELOW_SOL_FLOOR: a time below the workload's speed-of-light bound times the slack of
  farm.scoring (FLOOR_SLACK) is physically impossible; it is never scored.
- WALL_CLOCK_MISMATCH: the device time the worker reported must fit the wall time the supervisor
  measured around the same timed calls, once the harness's own per-call work is taken out.

The wall-clock rule, in ms over one timing request of `calls` timed calls:

    unexplained = wall_ms - calls * overhead_ms_per_call - reported_ms_total
    allowed     = WALL_RATIO * reported_ms_total
                  + (WALL_MS_PER_CALL + WALL_OVERHEAD_RATIO * overhead_ms_per_call) * calls
                  + WALL_FIXED_MS

Reject when unexplained > allowed (work hidden from the timer: side streams, background threads,
deferred or lazy computation, a patched clock), or when reported_ms_total > wall_ms *
(1 + WALL_OVER_RATIO) + WALL_FIXED_MS (more device time than elapsed time: forged numbers).
`overhead_ms_per_call` must come from a trusted calibration, e.g. the baseline timed the same
way: (its wall time - its reported time) / its calls. The margins let through an honest run with
2x jitter in its device time, 0.5 ms of launch latency per call, and a harness overhead per call
up to 1.5x the calibration's; a cheat that hides less work than that per call passes this rule
(the timer's all-stream spans and the guards are the first line against hidden work), one that
hides more is caught. WALL_OVERHEAD_RATIO: the calibration comes from another process (the
trusted baseline, which runs without the runtime guard), and on an H100 the candidate's harness
overhead per timed call measured 0.72x to 1.25x the baseline's for honest kernels
(docs/harness-fidelity.md); with the profiler's windows that overhead is about 2.5-4 ms per
call there, so hidden work of about 2 ms per call or more is caught.
"""

from __future__ import annotations

from farm.guard.findings import Finding
from farm.guard.rules import rule
from farm.scoring import FLOOR_SLACK, below_floor

WALL_RATIO = 1.0  # unexplained wall time allowed, as a multiple of the reported device time
WALL_MS_PER_CALL = 0.5  # plus this per timed call (Python launch latency, scheduling)
WALL_FIXED_MS = 250.0  # plus this per request (process wake-up, transfers, a GC pass)
WALL_OVER_RATIO = 0.05  # device time may exceed wall time by this fraction (clock granularity)
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
) -> list[Finding]:
    """WALL_CLOCK_MISMATCH when the reported device time and the observed wall time cannot both
    be true (see the module docstring for the rule and its margins). All times in ms.
    `overhead_ratio`: WALL_OVERHEAD_RATIO with a baseline's calibration, NULL_OVERHEAD_RATIO with
    the supervisor's own null-call calibration."""
    if calls <= 0 or wall_ms < 0 or reported_ms_total < 0 or overhead_ms_per_call < 0:
        raise ValueError("calls must be positive and times non-negative")
    ceiling = wall_ms * (1 + WALL_OVER_RATIO) + WALL_FIXED_MS
    if reported_ms_total > ceiling:
        return [
            _finding(
                "WALL_CLOCK_MISMATCH",
                f"{calls} calls reported {reported_ms_total:.6g} ms of device time in "
                f"{wall_ms:.6g} ms of wall time",
            )
        ]
    unexplained = wall_ms - calls * overhead_ms_per_call - reported_ms_total
    per_call = WALL_MS_PER_CALL + overhead_ratio * overhead_ms_per_call
    allowed = WALL_RATIO * reported_ms_total + per_call * calls + WALL_FIXED_MS
    if unexplained > allowed:
        return [
            _finding(
                "WALL_CLOCK_MISMATCH",
                f"{calls} calls reported {reported_ms_total:.6g} ms but took {wall_ms:.6g} ms of "
                f"wall time; {unexplained:.6g} ms is unaccounted for (allowed {allowed:.6g} ms)",
            )
        ]
    return []


WINDOW_FIXED_MS = 50.0  # per timing window: the request's round trip, the profiler's start/stop
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
) -> list[Finding]:
    """WALL_CLOCK_MISMATCH for timing windows the supervisor sized and timed itself, each given
    as (calls, wall ms, sum of the reported call times in ms). Every window on its own: the
    reported times may not exceed its wall (by more than WALL_OVER_RATIO and 1 ms), and its wall
    may not exceed them by more than `check_wall_clock` allows with WINDOW_FIXED_MS as the fixed
    cost; then all windows together, with WALL_FIXED_MS. A window's size is unknown to the
    worker until it starts, so no reported time can be moved from one window into another.

    One window whose wall alone is over, among at least STALL_WINDOWS that fit, is a pause of
    the host (a scheduler or driver stall of tens of ms, seen on loaded GPU nodes), not hidden
    work, which recurs with the calls that hide it: it is WALL_CLOCK_STALL, a flag. It gains a
    submission nothing: the scored time comes from the calls' device spans
    (farm.harness.report.scored_time), which a pause of the host does not lengthen, and the
    total over all windows still holds."""
    over: list[str] = []  # what each window over its allowance took
    timed = 0
    for calls, wall_ms, sum_ms in windows:
        if calls <= 0:
            continue
        timed += 1
        if sum_ms > wall_ms * (1 + WALL_OVER_RATIO) + 1.0:
            return [
                _finding(
                    "WALL_CLOCK_MISMATCH",
                    f"a window of {calls} calls reported {sum_ms:.6g} ms of device time in "
                    f"{wall_ms:.6g} ms of wall time",
                )
            ]
        unexplained = wall_ms - calls * overhead_ms_per_call - sum_ms
        per_call = WALL_MS_PER_CALL + overhead_ratio * overhead_ms_per_call
        allowed = WALL_RATIO * sum_ms + per_call * calls + WINDOW_FIXED_MS
        if unexplained > allowed:
            over.append(
                f"a window of {calls} calls reported {sum_ms:.6g} ms but took {wall_ms:.6g} "
                f"ms of wall time; {unexplained:.6g} ms is unaccounted for "
                f"(allowed {allowed:.6g} ms)"
            )
    if len(over) > 1 or (over and timed - 1 < STALL_WINDOWS):
        more = f" ({len(over)} windows over)" if len(over) > 1 else ""
        return [_finding("WALL_CLOCK_MISMATCH", over[0] + more)]
    stalled = [_finding("WALL_CLOCK_STALL", over[0])] if over else []
    calls = sum(c for c, _, _ in windows)
    if calls <= 0:
        return []
    return stalled + check_wall_clock(
        reported_ms_total=sum(s for _, _, s in windows),
        wall_ms=sum(w for _, w, _ in windows),
        calls=calls,
        overhead_ms_per_call=overhead_ms_per_call,
        overhead_ratio=overhead_ratio,
    )


# The check-wall rule (a lower bound, where the window rules bound reported times from above).
# Every correctness round is a call whose outputs the supervisor verified, timed by it from
# sending the request to holding the outputs, so a kernel's real time T is at most that wall
# minus the check path's own cost (the worker making the inputs, cloning and comparing them,
# poisoning the outputs' blocks, the guard's bookkeeping, the outputs' hand-off). The warmest
# round (the least wall after the first, which pays compilation) is held against the scored time:
#
#     min(walls after the first) - CHECK_OVERHEAD_RATIO * overhead_ms - CHECK_FIXED_MS
#         <= CHECK_WALL_RATIO * reported_ms
#
# `overhead_ms` is the check path around a call that does nothing, measured by the supervisor in
# its own process (farm.harness.reference.check_overhead_ms). CHECK_OVERHEAD_RATIO: the worker
# pays that path with the runtime guard's bookkeeping and a process switch on top.
# CHECK_FIXED_MS: the request's round trip, a scheduler slice on a loaded host, a GC pass (a
# check round is not run with the collector off). CHECK_WALL_RATIO: a checked call runs once,
# after a reply, where timed calls run back to back; honest CPU solutions measured up to
# 1.3x (docs/security.md). A submission that claims times for calls it never ran (tiny times,
# windows it answers itself) must still run the checked calls: it is caught when its real time
# exceeds twice its claim by more than the allowance.
CHECK_WALL_RATIO = 2.0
CHECK_OVERHEAD_RATIO = 2.0
CHECK_FIXED_MS = 25.0


def check_check_walls(
    *, walls_ms: list[float], reported_ms: float, overhead_ms: float
) -> list[Finding]:
    """CHECK_WALL_MISMATCH when the warmest checked call's wall (`walls_ms`, one per round, the
    supervisor's clock), less the allowance for the check path (`overhead_ms`, trusted), exceeds
    CHECK_WALL_RATIO x `reported_ms` (the scored time). All times in ms; with one round or none,
    there is no warm round and no finding."""
    if reported_ms < 0 or overhead_ms < 0:
        raise ValueError("times must be non-negative")
    warm = walls_ms[1:]
    if not warm:
        return []
    allowance = CHECK_OVERHEAD_RATIO * overhead_ms + CHECK_FIXED_MS
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
