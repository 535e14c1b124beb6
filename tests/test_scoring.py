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
    median_ci_ranks,
    sol_score,
    speedup,
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
    assert s.ci95_low_ms <= s.median_ms <= s.ci95_high_ms
    json.dumps(s.to_dict())
    assert s.to_dict()["ci_of"] == "median"


def test_timing_stats_single_sample():
    s = TimingStats.from_samples([2.0])
    assert s.std_ms == 0.0 and math.isinf(s.rse) and not s.has_ci
    assert s.to_dict()["rse"] is None
    for bad in ([], [1.0, math.nan], [-1.0]):
        with pytest.raises(ValueError):
            TimingStats.from_samples(bad)


def _coverage(n: int, low: int, high: int) -> float:
    """P(low < B <= high) for B ~ Binomial(n, 1/2): coverage of [x_(low), x_(high)], 0-based."""
    return sum(math.comb(n, i) for i in range(low + 1, high + 1)) / 2**n


@pytest.mark.parametrize("n", [6, 7, 10, 20, 50, 100, 301, 1000, 1001, 2500])
def test_median_interval_has_95_percent_coverage_and_is_tight(n):
    low, high = median_ci_ranks(n)
    assert 0 <= low < high <= n - 1 and low + high == n - 1
    assert _coverage(n, low, high) >= 0.95
    if n <= 1000 and low + 1 < high - 1:  # one rank tighter would miss 95 %
        assert _coverage(n, low + 1, high - 1) < 0.95


def test_median_interval_known_value():
    assert median_ci_ranks(100) == (39, 60)  # ranks 40 and 61 (1-based), a textbook case
    assert median_ci_ranks(MIN_SAMPLES_FOR_CI - 1) == (0, MIN_SAMPLES_FOR_CI - 2)


def test_compare_is_noise_aware():
    rng = random.Random(7)
    fast = TimingStats.from_samples([1.00 + rng.gauss(0, 0.01) for _ in range(50)])
    slow = TimingStats.from_samples([1.10 + rng.gauss(0, 0.01) for _ in range(50)])
    same = TimingStats.from_samples([1.00 + rng.gauss(0, 0.01) for _ in range(50)])
    assert compare(fast, slow) == -1 and compare(slow, fast) == 1
    assert compare(fast, same) == 0
    few = TimingStats.from_samples([0.5, 0.5, 0.5])
    assert compare(few, slow) == 0  # too few samples to tell
