"""SOL score, the physical floor, aggregation, timing statistics and noise-aware comparison."""

from __future__ import annotations

import json
import math
import random
import statistics

import pytest

from farm.scoring import (
    FLOOR_SLACK,
    MIN_SAMPLES_FOR_CI,
    TimingStats,
    aggregate,
    arithmetic_mean,
    below_floor,
    compare,
    fraction_of_sol,
    sol_score,
    speedup,
    trimmed_mean_ci,
)


def test_score_is_half_at_the_baseline_and_one_at_sol():
    assert sol_score(3.0, 1.0, 3.0) == pytest.approx(0.5)
    assert sol_score(1.0, 1.0, 3.0) == 1.0


def test_score_formula_between_and_beyond():
    assert sol_score(2.0, 1.0, 3.0) == pytest.approx(1 / (1 + 1 / 2))  # halfway: 2/3
    assert sol_score(5.0, 1.0, 3.0) == pytest.approx(1 / (1 + 4 / 2))  # slower than baseline
    scores = [sol_score(t, 1.0, 3.0) for t in (1.0, 1.5, 3.0, 10.0, 1e6)]
    assert scores == sorted(scores, reverse=True)
    assert 0.0 <= scores[-1] < 1e-5


def test_score_is_clamped_below_sol():
    # Unclamped, SOL-ExecBench's formula gives > 1 here and diverges at 2*T_SOL - T_b.
    assert sol_score(0.9, 1.0, 3.0) == 1.0
    assert sol_score(0.1, 1.0, 3.0) == 1.0


def test_baseline_at_or_below_sol_falls_back_to_fraction_of_sol():
    assert sol_score(2.0, 1.0, 0.8) == pytest.approx(0.5)  # T_SOL / T_k
    assert sol_score(4.0, 1.0, 1.0) == pytest.approx(0.25)
    assert sol_score(1.0, 1.0, 1.0) == 1.0


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_score_rejects_bad_times(bad):
    with pytest.raises(ValueError):
        sol_score(bad, 1.0, 2.0)
    with pytest.raises(ValueError):
        sol_score(1.0, bad, 2.0)


def test_floor():
    assert FLOOR_SLACK == 0.95
    assert below_floor(0.94, 1.0)
    assert not below_floor(0.96, 1.0)
    assert not below_floor(1.0, 1.0)
    assert below_floor(0.0, 1.0)
    assert below_floor(0.5, 1.0, slack=0.6) and not below_floor(0.7, 1.0, slack=0.6)
    with pytest.raises(ValueError):
        below_floor(1.0, 1.0, slack=1.5)


def test_aggregate_is_a_geometric_mean_with_explicit_zeros():
    assert aggregate([0.25, 1.0]) == pytest.approx(0.5)
    assert aggregate([0.5, 0.5, 0.5]) == pytest.approx(0.5)
    assert aggregate([0.9, 0.0, 0.8]) == 0.0
    assert arithmetic_mean([0.25, 1.0]) == pytest.approx(0.625)
    for bad in ([], [1.5], [math.nan], [-0.1]):
        with pytest.raises(ValueError):
            aggregate(bad)
        with pytest.raises(ValueError):
            arithmetic_mean(bad)


def test_speedup_and_fraction_of_sol():
    assert speedup(2.0, 1.0) == 2.0
    assert fraction_of_sol(2.0, 1.0) == 0.5
    with pytest.raises(ValueError):
        speedup(1.0, 0.0)


def test_timing_stats_summary():
    samples = [1.0, 1.2, 0.9, 1.1, 1.05, 0.95, 1.0, 5.0]
    s = TimingStats.from_samples(samples)
    assert s.count == 8 and s.min_ms == 0.9 and s.max_ms == 5.0
    assert s.median_ms == pytest.approx(statistics.median(samples))
    assert s.mean_ms == pytest.approx(statistics.mean(samples))
    assert s.std_ms == pytest.approx(statistics.stdev(samples))
    assert s.rse == pytest.approx(s.std_ms / math.sqrt(8) / s.mean_ms)
    assert s.trimmed_mean_ms == pytest.approx(s.mean_ms)  # a tenth of 8 calls is none
    assert s.ci95_low_ms <= s.trimmed_mean_ms <= s.ci95_high_ms
    json.dumps(s.to_dict())
    assert s.to_dict()["ci_of"] == "trimmed-mean"


def test_timing_stats_single_sample():
    s = TimingStats.from_samples([2.0])
    assert s.std_ms == 0.0 and math.isinf(s.rse) and not s.has_ci
    assert s.to_dict()["rse"] is None
    for bad in ([], [1.0, math.nan], [-1.0]):
        with pytest.raises(ValueError):
            TimingStats.from_samples(bad)


def test_trimmed_mean_cuts_a_tenth_from_each_end():
    xs = sorted([1.0] * 18 + [0.0, 100.0])  # one outlier at each end of 20 calls
    trimmed, low, high = trimmed_mean_ci(xs)
    assert trimmed == 1.0 and low <= 1.0 <= high
    assert TimingStats.from_samples(xs).trimmed_mean_ms == 1.0


def test_trimmed_mean_of_two_modes_moves_with_their_shares_not_between_them():
    # a short kernel's calls at two placements 1.4 % apart: the median jumps from one mode to
    # the other as their shares cross one half, the trimmed mean moves by a fraction of the gap
    def calls(share_low: float, n: int = 400) -> list[float]:
        low = round(share_low * n)
        return [49.2] * low + [49.9] * (n - low)

    a, b = TimingStats.from_samples(calls(0.48)), TimingStats.from_samples(calls(0.52))
    assert abs(a.median_ms - b.median_ms) == pytest.approx(0.7)
    assert abs(a.trimmed_mean_ms - b.trimmed_mean_ms) < 0.05


@pytest.mark.parametrize("n", [10, 30, 200])
def test_trimmed_mean_interval_covers_about_95_percent(n):
    rng = random.Random(n)
    covered = 0
    for _ in range(400):
        xs = sorted(rng.gauss(1.0, 0.1) for _ in range(n))
        _, low, high = trimmed_mean_ci(xs)
        covered += low <= 1.0 <= high
    assert 0.91 <= covered / 400 <= 0.99


def test_trimmed_mean_interval_needs_enough_samples():
    assert trimmed_mean_ci([1.0, 2.0, 3.0]) == (2.0, 1.0, 3.0)  # [min, max]
    assert not TimingStats.from_samples([1.0] * (MIN_SAMPLES_FOR_CI - 1)).has_ci


def test_compare_is_noise_aware():
    rng = random.Random(7)
    fast = TimingStats.from_samples([1.00 + rng.gauss(0, 0.01) for _ in range(50)])
    slow = TimingStats.from_samples([1.10 + rng.gauss(0, 0.01) for _ in range(50)])
    same = TimingStats.from_samples([1.00 + rng.gauss(0, 0.01) for _ in range(50)])
    assert compare(fast, slow) == -1 and compare(slow, fast) == 1
    assert compare(fast, same) == 0
    few = TimingStats.from_samples([0.5, 0.5, 0.5])
    assert compare(few, slow) == 0  # too few samples to tell


def _scored(times):
    from farm.scoring import scored_time

    return scored_time(TimingStats.from_samples(times))


def test_work_amortised_into_a_few_calls_is_scored_at_the_mean_of_all_calls():
    # one call in 60 computes the next 60 answers (1 ms each): the trim cuts it, and so did the
    # median of window means whenever a window held no such call
    cheat = ([0.001] * 59 + [60.0]) * 10
    time_ms, statistic = _scored(cheat)
    assert statistic == "mean" and time_ms == pytest.approx(1.001, rel=1e-3)
    # a batched fix-up every 8th call, as tests/hacks/batched_fixup_every_8th.py does
    fixup = ([0.01] * 7 + [8.0]) * 40
    assert _scored(fixup)[0] == pytest.approx((7 * 0.01 + 8.0) / 8)


def test_honest_heavy_tailed_noise_keeps_the_trimmed_mean():
    import random

    from farm.scoring import MEAN_TOLERANCE

    rng = random.Random(7)
    for _ in range(20):
        # log-normal jitter, 2 % of calls three times slower, one 10x stall in 600 calls
        times = [
            rng.lognormvariate(0, 0.05) * (3 if rng.random() < 0.02 else 1) for _ in range(600)
        ]
        times[rng.randrange(600)] = 10.0
        stats = TimingStats.from_samples(times)
        assert stats.mean_ms < (1 + MEAN_TOLERANCE) * stats.trimmed_mean_ms
        assert _scored(times) == (stats.trimmed_mean_ms, "trimmed-mean")


def test_times_tie_on_a_deterministic_device_within_its_schedule_spread():
    from farm.scoring import DETERMINISTIC_TIE, times_tie

    same = (5.0, 5.0)
    assert times_tie(same, (4.9995, 4.9995), deterministic=True)  # 0.01 % apart
    apart = 5.0 * (1 + 2 * DETERMINISTIC_TIE)
    assert not times_tie(same, (apart, apart), deterministic=True)


def test_measured_times_tie_when_their_intervals_overlap():
    from farm.scoring import MEASURED_NOISE, times_tie

    assert times_tie((4.9, 5.1), (5.05, 5.3), deterministic=False)
    assert not times_tie((4.9, 5.0), (5.05, 5.3), deterministic=False)
    # an interval of zero width is taken as MEASURED_NOISE either side
    near = 5.0 * (1 + MEASURED_NOISE)
    assert times_tie((5.0, 5.0), (near, near), deterministic=False)
    far = 5.0 * (1 + 3 * MEASURED_NOISE)
    assert not times_tie((5.0, 5.0), (far, far), deterministic=False)
