"""Plausibility of reported times on the trusted side: the roofline floor and the wall clock."""

from __future__ import annotations

import pytest

from farm.guard.plausibility import (
    FLOOR_RATIO,
    WALL_OVERHEAD_RATIO,
    check_times,
    check_wall_clock,
)
from farm.scoring import FLOOR_SLACK


def codes(findings):
    return [f.code for f in findings]


def test_time_below_the_floor_is_rejected():
    (finding,) = check_times(time_ms=0.5, sol_ms=1.0, slack=FLOOR_SLACK)
    assert finding.code == "BELOW_SOL_FLOOR" and finding.severity == "reject"
    assert "0.95" in finding.detail


def test_time_within_the_slack_and_above_sol_pass():
    assert check_times(time_ms=1.0 * FLOOR_SLACK, sol_ms=1.0) == []
    assert check_times(time_ms=3.0, sol_ms=1.0) == []


def test_zero_or_negative_time_is_rejected():
    assert codes(check_times(time_ms=0.0, sol_ms=1.0)) == ["BELOW_SOL_FLOOR"]
    assert codes(check_times(time_ms=-1.0, sol_ms=1.0)) == ["BELOW_SOL_FLOOR"]


def test_broken_sol_bound_is_an_error_not_a_verdict():
    with pytest.raises(ValueError, match="sol_ms"):
        check_times(time_ms=1.0, sol_ms=0.0)


def test_geomean_collapse_shape_is_rejected():
    # reference-kernels #159: one shape driven to ~0 collapses a geometric mean.
    assert codes(check_times(time_ms=1e-6, sol_ms=0.004)) == ["BELOW_SOL_FLOOR"]


def test_honest_run_fits_the_wall_clock():
    # 100 calls of 2 ms, 1 ms of harness work per call, some jitter.
    assert (
        check_wall_clock(reported_ms_total=200, wall_ms=420, calls=100, overhead_ms_per_call=1.0)
        == []
    )


def test_work_hidden_from_the_timer_is_rejected():
    # 100 calls reported as 0.01 ms each, but 5 ms per call of wall time went somewhere.
    (finding,) = check_wall_clock(
        reported_ms_total=1.0, wall_ms=600, calls=100, overhead_ms_per_call=0.1
    )
    assert finding.code == "WALL_CLOCK_MISMATCH" and "unaccounted" in finding.detail


def test_the_margin_is_where_the_docstring_says():
    calls, reported, overhead, floor = 100, 10.0, 1.0, 4.0
    allowed = reported + WALL_OVERHEAD_RATIO * overhead * calls + FLOOR_RATIO * floor
    edge = calls * overhead + reported + allowed
    common = {"reported_ms_total": reported, "calls": calls, "floor_ms": floor}
    assert check_wall_clock(wall_ms=edge, overhead_ms_per_call=overhead, **common) == []
    assert check_wall_clock(wall_ms=edge + 0.1, overhead_ms_per_call=overhead, **common)
    # every term scales with what was measured: a yardstick twice as costly allows twice as much
    wide = calls * 2 * overhead + reported + reported + WALL_OVERHEAD_RATIO * 2 * overhead * calls
    assert (
        check_wall_clock(wall_ms=wide + FLOOR_RATIO * floor, overhead_ms_per_call=2, **common) == []
    )
    assert check_wall_clock(
        wall_ms=wide + FLOOR_RATIO * floor + 0.1, overhead_ms_per_call=2, **common
    )


def test_more_device_time_than_wall_time_is_rejected():
    (finding,) = check_wall_clock(
        reported_ms_total=5000, wall_ms=1000, calls=10, overhead_ms_per_call=0
    )
    assert finding.code == "WALL_CLOCK_MISMATCH" and "device time in" in finding.detail


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError):
        check_wall_clock(reported_ms_total=1, wall_ms=1, calls=0, overhead_ms_per_call=0)


def _windows(calls, time_ms, overhead_ms, hidden_ms=0.0, fixed_ms=5.0, sizes=(180, 260, 210, 350)):
    """Windows as the supervisor records them: `sizes` calls each, every call `time_ms` of
    reported device time, `overhead_ms` of harness time and `hidden_ms` of work the reply hides,
    plus `fixed_ms` per window (the request's round trip)."""
    out, start = [], 0
    for n in sizes[: max(1, calls // 100)] if calls else sizes:
        wall = n * (time_ms + overhead_ms + hidden_ms) + fixed_ms
        out.append({"start": start, "calls": n, "wall_ms": wall, "sum_ms": n * time_ms})
        start += n
    return out


def _timing(windows, median, **extra):
    count = sum(w["calls"] for w in windows)
    return {
        "count": count,
        "warmup_calls": 1000,
        "warmup_ms": 300.0,
        "wall_ms_outside": 300.0 + sum(w["wall_ms"] for w in windows),
        "median_ms": median,
        "mean_ms": median,
        "windows": windows,
        "method": "cupti-span+events",
        **extra,
    }


# Figures after an H100 run (docs/harness-fidelity.md): the Triton layernorm of
# tests/solutions/correct on workload sdxl-transformer-32x32-fp32 and its eager baseline. A timed
# call costs ~2.6 ms of harness time with the profiler; honest candidates measured 0.72x to 1.25x
# the baseline's harness time per call.
BASE = _timing(_windows(0, 0.0141, 2.56), 0.0141)


def _entry(timing, *, base=BASE, null=None):
    entry = {"id": "w", "timing": {**timing}}
    if base is not None:
        entry["baseline_timing"] = {"eager": base}
    if null is not None:
        entry["timing"]["harness_overhead_ms"] = null
    return entry


def _record(entry):
    """A workload's record (farm.harness.record) as the rules read it, from its JSON form."""
    from farm.harness.record import Checks, WorkloadRecord
    from farm.result import TimingSummary, WorkloadStatus

    checks = entry.get("correctness")
    return WorkloadRecord(
        id=entry["id"],
        status=WorkloadStatus(entry.get("status", "PASSED")),
        errors=[],
        time_ms=entry.get("time_ms"),
        timing=TimingSummary.from_json(entry["timing"]) if entry.get("timing") else None,
        baseline_timing={
            k: TimingSummary.from_json(v) for k, v in (entry.get("baseline_timing") or {}).items()
        },
        checks=Checks(
            rounds=checks["rounds"],
            walls_ms=checks["walls_ms"],
            overhead_ms=checks["overhead_ms"],
            floor_ms=checks["floor_ms"],
        )
        if checks
        else None,
        host=entry.get("host"),
    )


def test_honest_windows_pass():
    from farm.harness.report import wall_clock_findings

    for ratio in (0.72, 1.0, 1.25):
        entry = _entry(_timing(_windows(0, 0.0113, 2.56 * ratio), 0.0113))
        assert wall_clock_findings(_record(entry), simulated=False) == []


def test_wall_clock_still_catches_hidden_work_per_call():
    from farm.harness.report import wall_clock_findings

    # caught from half the calibrated overhead (2.56 ms here) per call: 2.5 ms hidden
    hidden = _entry(_timing(_windows(0, 0.0113, 2.56, hidden_ms=2.5), 0.0113))
    (finding,) = wall_clock_findings(_record(hidden), simulated=False)
    assert finding.code == "WALL_CLOCK_MISMATCH" and finding.workload == "w"
    # the worker's count of warm-up calls does not move the line, nor does its method label
    forged = {**hidden, "timing": {**hidden["timing"], "warmup_calls": 10**6}}
    assert wall_clock_findings(_record(forged), simulated=False)
    relabelled = {**hidden, "timing": {**hidden["timing"], "method": "npu-sim-model"}}
    assert wall_clock_findings(_record(relabelled), simulated=False)
    assert (
        wall_clock_findings(_record(hidden), simulated=True) == []
    )  # the supervisor's device decides


def test_time_cannot_move_between_windows():
    from farm.harness.report import wall_clock_findings

    # one window reports the device time of two: the total fits, that window's wall does not
    windows = _windows(0, 10.0, 2.56)
    windows[0] = {**windows[0], "sum_ms": windows[0]["sum_ms"] + windows[1]["sum_ms"]}
    windows[1] = {**windows[1], "sum_ms": 0.0}
    (finding,) = wall_clock_findings(_record(_entry(_timing(windows, 10.0))), simulated=False)
    assert "device time in" in finding.detail


def test_one_stalled_window_is_a_flag_two_are_a_mismatch():
    """A pause of the host stretches one window (seen on a loaded two-GPU node: 63-92 ms
    unaccounted against an allowance of 58-64 ms); hidden work stretches every window that
    runs it."""
    from farm.harness.report import wall_clock_findings

    def stalled(windows, *which):
        return [
            {**w, "wall_ms": w["wall_ms"] + 80.0} if i in which else w
            for i, w in enumerate(windows)
        ]

    tiny = _windows(0, 0.02, 2.56, sizes=(7, 9, 12, 8))  # a 20 us kernel, calls as the baseline's
    (flag,) = wall_clock_findings(_record(_entry(_timing(stalled(tiny, 2), 0.02))), simulated=False)
    assert flag.code == "WALL_CLOCK_STALL" and flag.severity == "flag"
    (twice,) = wall_clock_findings(
        _record(_entry(_timing(stalled(tiny, 1, 3), 0.02))), simulated=False
    )
    assert twice.code == "WALL_CLOCK_MISMATCH" and "2 windows over" in twice.detail
    # with too few windows that fit, one over is not put down to a stall
    (few,) = wall_clock_findings(
        _record(_entry(_timing(stalled(tiny[:2], 1), 0.02))), simulated=False
    )
    assert few.code == "WALL_CLOCK_MISMATCH"
    # hidden work in every window is caught as before, whatever a stall forgives
    hidden = _windows(0, 0.02, 2.56, hidden_ms=12.0, sizes=(7, 9, 12, 8))
    (caught,) = wall_clock_findings(_record(_entry(_timing(hidden, 0.02))), simulated=False)
    assert caught.code == "WALL_CLOCK_MISMATCH"


def test_without_a_baseline_the_supervisors_own_calibration_is_the_yardstick():
    from farm.harness.report import wall_clock_findings

    # the matmul of docs/security.md's H100 run: 2.75 ms of harness time per call against a
    # null-call calibration of 1.22 ms (2.26x) is honest and passes
    honest = _entry(_timing(_windows(0, 0.0028, 2.75), 0.0028), base=None, null=1.22)
    assert wall_clock_findings(_record(honest), simulated=False) == []
    # 6 ms per call more than that is caught (2 x 1.22 ms allowed per call)
    hidden = _entry(_timing(_windows(0, 0.0028, 2.75, hidden_ms=6), 0.0028), base=None, null=1.22)
    (finding,) = wall_clock_findings(_record(hidden), simulated=False)
    assert finding.code == "WALL_CLOCK_MISMATCH"
    # simulated times (npu-sim) are not held against the wall clock
    assert wall_clock_findings(_record(_entry(hidden["timing"], base=None)), simulated=True) == []


def _checked(time_ms, walls_ms, overhead_ms=0.2, floor_ms=3.0):
    checks = {"walls_ms": walls_ms, "overhead_ms": overhead_ms, "floor_ms": floor_ms}
    return {"id": "w", "time_ms": time_ms, "correctness": {"rounds": len(walls_ms), **checks}}


def test_checked_calls_bound_the_reported_time_from_below():
    from farm.guard.plausibility import CHECK_FLOOR_RATIO, CHECK_WALL_RATIO
    from farm.harness.report import check_wall_findings

    # honest: the softmax__triton small workload on the CPU (a check round of 320 ms, scored
    # 351 ms), and a first round that paid the compilation
    assert (
        check_wall_findings(_record(_checked(351.0, [9000.0, 330.0, 320.0])), simulated=False) == []
    )
    # a 150 ms kernel that claims 1 us calls: its checked calls took 150 ms each
    cheat = _checked(0.001, [160.0, 151.0, 153.0])
    (finding,) = check_wall_findings(_record(cheat), simulated=False)
    assert finding.code == "CHECK_WALL_MISMATCH" and finding.workload == "w"
    assert (
        check_wall_findings(_record(cheat), simulated=True) == []
    )  # the supervisor's device decides
    # the line: the warmest round less the allowance, at CHECK_WALL_RATIO x the reported time
    edge = 10.0 * CHECK_WALL_RATIO + 2 * 0.2 + CHECK_FLOOR_RATIO * 3.0
    assert check_wall_findings(_record(_checked(10.0, [99.0, edge - 0.01])), simulated=False) == []
    assert check_wall_findings(_record(_checked(10.0, [99.0, edge + 0.01])), simulated=False)
    # only the warm rounds count (the first pays compilation), and without them there is no rule
    assert check_wall_findings(_record(_checked(0.001, [500.0, 1.0, 1.0])), simulated=False) == []
    assert check_wall_findings(_record(_checked(0.001, [500.0])), simulated=False) == []
    # no trusted overhead (not measured: simulated, or not timed) means no rule
    assert (
        check_wall_findings(_record(_checked(0.001, [160.0, 151.0], None)), simulated=False) == []
    )


def test_a_whole_small_kernel_hidden_per_call_is_caught():
    """0.5 ms per call and 50 ms per window of fixed allowance hid a 0.5 ms kernel per call
    behind 0.3 ms of harness time (a CPU worker's loop); allowances relative to the yardstick
    do not."""
    from farm.harness.report import wall_clock_findings

    base = _timing(_windows(0, 0.01, 0.3), 0.01)
    hidden = _entry(_timing(_windows(0, 0.01, 0.3, hidden_ms=0.5), 0.01), base=base)
    (finding,) = wall_clock_findings(_record(hidden), simulated=False)
    assert finding.code == "WALL_CLOCK_MISMATCH"
    honest = _entry(_timing(_windows(0, 0.01, 0.3 * 1.25), 0.01), base=base)
    assert wall_clock_findings(_record(honest), simulated=False) == []


def test_a_rule_that_fires_on_a_busy_host_is_inconclusive_not_a_rejection():
    from farm.harness.host_load import HostLoad
    from farm.harness.report import check_wall_findings, host_busy

    def entry(host, status="PASSED"):
        cheat = _checked(0.001, [160.0, 151.0, 153.0])
        return _record({**cheat, "status": status, "host": host})

    busy = entry(HostLoad(per_core=6.5, steal=0.0))
    found = host_busy(busy, check_wall_findings(busy, simulated=False))
    assert [f.severity for f in found] == ["flag"] and busy.status == "INCONCLUSIVE"
    (why,) = busy.errors
    assert why.code == "HOST_BUSY" and "6.50 runnable threads per core" in why.detail
    assert "CHECK_WALL_MISMATCH" in why.detail  # what was measured, in the reason
    quiet = entry(HostLoad(per_core=0.2, steal=0.0, yardstick_ratio=1.1))
    found = host_busy(quiet, check_wall_findings(quiet, simulated=False))
    assert [f.severity for f in found] == ["reject"] and quiet.status == "PASSED"
    # a verdict of another rule's stands whatever the host did
    floor = entry(HostLoad(per_core=6.5, steal=0.0), "REJECTED")
    host_busy(floor, check_wall_findings(floor, simulated=False))
    assert floor.status == "REJECTED"
