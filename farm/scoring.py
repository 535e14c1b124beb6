"""Scores from times: the SOL score, the physical floor, aggregation, and noise-aware comparison.

All times are in milliseconds. The definitions are in docs/hardware.md; in short:

- SOL score (SOL-ExecBench): S = 1 / (1 + (T_k - T_SOL) / (T_b - T_SOL)); 0.5 at the baseline
  time, 1 at SOL, tending to 0 for slow kernels. Clamped to [0, 1] (unclamped, it exceeds 1
  below SOL and diverges at T_k = 2 T_SOL - T_b).
- A time below T_SOL x FLOOR_SLACK is impossible and is never scored (`below_floor`).
- A problem's workloads combine by geometric mean; a zero (a failed workload) makes it zero.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

# A time below T_SOL x FLOOR_SLACK is rejected as physically impossible. 5 % below the bound
# rather than 0 %: the peaks are vendor figures rounded to 2-3 digits and one sheet can differ
# from another for the same part by up to 4 % (B200 7.7 vs 8.0 TB/s, FP32 75 vs 80 TFLOP/s);
# event timing quantises short kernels and carries about 1-2 % of run-to-run noise (see
# docs/reference/field-notes.md). 5 % covers all of these together, while a time-collapsing
# cheat (a shape driven to ~0) lands orders of magnitude below it.
FLOOR_SLACK = 0.95

# The share of calls cut from each end for the trimmed mean (TimingStats.trimmed_mean_ms).
TRIM = 0.1
# The scored time is the trimmed mean unless the mean of every timed call exceeds it by more than
# this fraction; then the mean is scored (`scored_time`). The trim cuts the calls that pay for
# others (one call in 60 computing the next 60 answers, a batched fix-up every k-th call), so the
# mean of all timed work binds it: such a cheat gains at most this fraction. Honest tails (a
# neighbour's interference, a scheduler slice on the CPU) move the mean by a few per cent.
MEAN_TOLERANCE = 0.10
# The two-sided 95 % normal quantile (the trimmed mean's t quantile starts from it).
_Z95 = 1.959963984540054
# Below this many samples an interval is [min, max] and not taken for a 95 % one (the order-
# statistic interval of the median cannot reach 95 %: with 5 samples, [min, max] covers it with
# probability 1 - 2/32 = 0.94; the trimmed mean's keeps too few samples to estimate a spread).
MIN_SAMPLES_FOR_CI = 6
# Board ties. A measured time that comes without a spread (an interval of zero width: no
# interval stored, or one call) is taken as this fraction either side of it: the 1-2 % of
# run-to-run noise of event timing (docs/reference/field-notes.md), at its upper end.
MEASURED_NOISE = 0.02
# A deterministic device (farm.hardware.kinds.DeviceKind.deterministic) gives the same work the
# same time, to the bit, on every run and host; two of its times tie when they differ by less
# than this fraction, the largest difference between two schedules of the same work the replay
# can produce (Graham's bound for launches over 65536 programs is above the greedy schedule by
# under 0.1 %, docs/npu-sim.md "Real sizes: sampling").
DETERMINISTIC_TIE = 0.001


def sol_score(t_k: float, t_sol: float, t_b: float) -> float:
    """SOL score of a kernel time `t_k` against the bound `t_sol` and baseline time `t_b` (ms).

    Clamped to [0, 1]: a kernel at or below T_SOL scores 1 (a time below the floor must be
    rejected by the caller with `below_floor`, never scored). When the baseline is at or below
    the bound (T_b <= T_SOL: the reference already runs at SOL, or the bound is loose for this
    problem), the baseline gap is meaningless; the score falls back to the fraction of SOL,
    T_SOL / T_k, which is the same formula with the gap T_b - T_SOL replaced by T_SOL (as if
    the baseline took 2 T_SOL). Raises ValueError for non-positive or non-finite inputs.
    """
    _check_positive(t_k=t_k, t_sol=t_sol, t_b=t_b)
    if t_k <= t_sol:
        return 1.0
    gap = t_b - t_sol if t_b > t_sol else t_sol
    return _clamp(1.0 / (1.0 + (t_k - t_sol) / gap))


def fraction_of_sol(t_k: float, t_sol: float) -> float:
    """T_SOL / T_k: 1.0 at SOL, 0.5 at twice the bound (not clamped)."""
    _check_positive(t_k=t_k, t_sol=t_sol)
    return t_sol / t_k


def speedup(t_base: float, t_k: float) -> float:
    """How many times faster the kernel is than the baseline: T_base / T_k."""
    _check_positive(t_base=t_base, t_k=t_k)
    return t_base / t_k


def below_floor(t_k: float, t_sol: float, slack: float = FLOOR_SLACK) -> bool:
    """True when `t_k` (ms) is below `t_sol` x `slack`: faster than physically possible."""
    if not 0 < slack <= 1:
        raise ValueError(f"slack must be in (0, 1], got {slack}")
    return t_k < t_sol * slack


def aggregate(scores: Iterable[float]) -> float:
    """Geometric mean of scores in [0, 1]; 0.0 when any score is 0 (a failed workload).

    The zero case is explicit (log 0 is undefined): a problem is only as good as its worst
    workload when that workload failed. Raises ValueError for an empty list or a score
    outside [0, 1] (scores must be clamped before aggregation, so one shape cannot dominate).
    """
    values = _checked_scores(scores)
    if any(v == 0.0 for v in values):
        return 0.0
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def arithmetic_mean(scores: Iterable[float]) -> float:
    """Plain mean of scores in [0, 1]; raises ValueError as `aggregate` does."""
    values = _checked_scores(scores)
    return math.fsum(values) / len(values)


@dataclass(frozen=True)
class TimingStats:
    """Summary of repeated timings of one call, in ms.

    `trimmed_mean_ms` is the mean of the middle calls (TRIM of them cut from each end): the
    statistic a workload is scored on unless the mean exceeds it (`scored_time`). A call's time
    depends on where its inputs lie in device memory, and the harness draws a new place for every
    call (farm.harness.timing.Placement), so the calls of a short kernel fall into several modes
    (two, about 1.5 % apart, for a 50 us vector add on an H200, docs/harness-fidelity.md): the
    median of such a mixture jumps between its modes from run to run, the trimmed mean moves
    with the modes' shares, which many calls pin down, and still drops the tails a neighbour's
    interference leaves. `ci95_low_ms`/`ci95_high_ms` bound the trimmed mean (Tukey and
    McLaughlin's interval: the winsorised variance, Student's t with h - 1 degrees of freedom
    for the h calls kept). `rse` is the relative standard error of the mean, std / sqrt(count)
    / mean, the quantity adaptive stop rules watch. With one sample std is 0.0 and rse is inf.
    """

    median_ms: float
    trimmed_mean_ms: float
    mean_ms: float
    std_ms: float
    min_ms: float
    max_ms: float
    count: int
    ci95_low_ms: float
    ci95_high_ms: float
    rse: float

    @classmethod
    def from_samples(cls, samples_ms: Sequence[float]) -> TimingStats:
        """Summarise `samples_ms`; raises ValueError if empty, non-finite or negative."""
        xs = sorted(float(x) for x in samples_ms)
        if not xs:
            raise ValueError("no timing samples")
        if any(not math.isfinite(x) or x < 0 for x in xs):
            raise ValueError("timing samples must be finite and >= 0 ms")
        n = len(xs)
        mean = math.fsum(xs) / n
        std = statistics.stdev(xs) if n > 1 else 0.0
        trimmed, low, high = trimmed_mean_ci(xs)
        return cls(
            median_ms=statistics.median(xs),
            trimmed_mean_ms=trimmed,
            mean_ms=mean,
            std_ms=std,
            min_ms=xs[0],
            max_ms=xs[-1],
            count=n,
            ci95_low_ms=low,
            ci95_high_ms=high,
            rse=std / math.sqrt(n) / mean if n > 1 and mean > 0 else math.inf,
        )

    @property
    def has_ci(self) -> bool:
        """Whether the interval really has 95 % coverage (enough samples)."""
        return self.count >= MIN_SAMPLES_FOR_CI

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci_of"] = "trimmed-mean"
        if math.isinf(self.rse):
            d["rse"] = None  # JSON has no inf
        return d


def scored_time(stats: TimingStats) -> tuple[float, str]:
    """The time (ms) a workload is scored on and the statistic it is: "trimmed-mean" of the
    calls, or "mean" of all of them when it exceeds the trimmed mean by more than
    MEAN_TOLERANCE (the work some calls did for others is paid where it was done)."""
    if stats.mean_ms > (1 + MEAN_TOLERANCE) * stats.trimmed_mean_ms:
        return stats.mean_ms, "mean"
    return stats.trimmed_mean_ms, "trimmed-mean"


def trimmed_mean_ci(xs: Sequence[float]) -> tuple[float, float, float]:
    """The trimmed mean of sorted samples `xs` (TRIM of them cut from each end) and its 95 %
    interval (low, high): Tukey-McLaughlin, se = sqrt((n - 1) s_w^2 / (h (h - 1))) with s_w^2
    the winsorised sample variance and h the samples kept, times Student's t quantile at h - 1
    degrees of freedom. Below MIN_SAMPLES_FOR_CI samples the interval is [min, max]."""
    n = len(xs)
    g = int(TRIM * n)
    kept = xs[g : n - g]
    h = len(kept)
    trimmed = math.fsum(kept) / h
    if n < MIN_SAMPLES_FOR_CI or h < 2:
        return trimmed, xs[0], xs[-1]
    winsorised = [kept[0]] * g + list(kept) + [kept[-1]] * g
    se = math.sqrt((n - 1) * statistics.variance(winsorised) / (h * (h - 1)))
    half = _t975(h - 1) * se
    return trimmed, trimmed - half, trimmed + half


def _t975(df: int) -> float:
    """Student's t 97.5 % quantile (Cornish-Fisher expansion in 1/df of the normal quantile:
    within 0.3 % of the exact value from 5 degrees of freedom up)."""
    z = _Z95
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def compare(a: TimingStats, b: TimingStats) -> int:
    """-1 when `a` is faster than `b`, +1 when slower, 0 when they cannot be told apart.

    Noise-aware: only when the 95 % intervals of the two trimmed means do not overlap is one
    faster;
    with fewer than MIN_SAMPLES_FOR_CI samples on either side the answer is 0.
    """
    if not (a.has_ci and b.has_ci):
        return 0
    if a.ci95_high_ms < b.ci95_low_ms:
        return -1
    if b.ci95_high_ms < a.ci95_low_ms:
        return 1
    return 0


def times_tie(a: tuple[float, float], b: tuple[float, float], *, deterministic: bool) -> bool:
    """Whether two times of one workload, each given as its [low, high] interval in ms, cannot be
    ranked. On a deterministic device the interval is the time itself (its midpoint) and two
    times tie within DETERMINISTIC_TIE of the larger; elsewhere the intervals overlap, an
    interval of zero width taken as MEASURED_NOISE either side of its time."""
    if deterministic:
        ta, tb = (a[0] + a[1]) / 2, (b[0] + b[1]) / 2
        return abs(ta - tb) <= DETERMINISTIC_TIE * max(ta, tb)
    (a_lo, a_hi), (b_lo, b_hi) = _spread(a), _spread(b)
    return a_lo <= b_hi and b_lo <= a_hi


def _spread(interval: tuple[float, float]) -> tuple[float, float]:
    low, high = interval
    if high > low:
        return low, high
    return low * (1 - MEASURED_NOISE), high * (1 + MEASURED_NOISE)


def _checked_scores(scores: Iterable[float]) -> list[float]:
    values = [float(s) for s in scores]
    if not values:
        raise ValueError("no scores to aggregate")
    bad = [v for v in values if not 0.0 <= v <= 1.0]  # also catches NaN
    if bad:
        raise ValueError(f"scores must be in [0, 1] (clamped SOL scores), got {bad[:3]}")
    return values


def _check_positive(**times: float) -> None:
    for name, value in times.items():
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite time > 0 ms, got {value}")


def _clamp(x: float) -> float:
    return min(1.0, max(0.0, x))
