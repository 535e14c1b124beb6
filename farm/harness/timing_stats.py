"""Timing statistics: what one timing measured (`Measured`, the windows the supervisor timed
itself) and the result's typed summary of it (farm.result.TimingSummary), scored on the
statistic farm.scoring.scored_time picks. Times in ms."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from farm import scoring
from farm.result import Interval, TimingSummary


@dataclass(frozen=True)
class WindowRecord:
    """One window as the supervisor saw it: `calls` calls from index `start`, `wall_ms` from
    sending the request to reading the reply (its own clock), `sum_ms` the reported times."""

    start: int
    calls: int
    wall_ms: float
    sum_ms: float

    def to_json(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "calls": self.calls,
            "wall_ms": self.wall_ms,
            "sum_ms": self.sum_ms,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WindowRecord:
        """Raises KeyError, TypeError or ValueError for what is not one."""
        return cls(
            int(data["start"]), int(data["calls"]), float(data["wall_ms"]), float(data["sum_ms"])
        )


@dataclass(frozen=True)
class Measured:
    """What one timing measured: per-call times and the current stream's event times, the
    windows (with each window's mean in `windows_ms`), the calls re-checked and each pick
    reply's turnaround, the warm-up, and a simulator's report (npu-sim)."""

    times_ms: list[float]
    method: str
    event_ms: list[float] = field(default_factory=list)
    windows_ms: list[float] = field(default_factory=list)
    windows: list[WindowRecord] = field(default_factory=list)
    rechecked: list[int] = field(default_factory=list)
    picks_ms: list[float] = field(default_factory=list)
    warmup_calls: int = 0
    warmup_wall_ms: float = 0.0
    sim: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "times_ms": self.times_ms,
            "event_ms": self.event_ms,
            "method": self.method,
            "windows_ms": self.windows_ms,
            "windows": [w.to_json() for w in self.windows],
            "rechecked": self.rechecked,
            "picks_ms": self.picks_ms,
            "warmup_calls": self.warmup_calls,
            "warmup_wall_ms": self.warmup_wall_ms,
            "sim": self.sim,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Measured:
        """A stored one (farm.harness.baselines); raises KeyError, TypeError or ValueError."""
        return cls(
            times_ms=[float(t) for t in data["times_ms"]],
            method=str(data["method"]),
            event_ms=[float(t) for t in data.get("event_ms") or []],
            windows_ms=[float(t) for t in data.get("windows_ms") or []],
            windows=[WindowRecord.from_json(w) for w in data.get("windows") or []],
            rechecked=[int(i) for i in data.get("rechecked") or []],
            picks_ms=[float(t) for t in data.get("picks_ms") or []],
            warmup_calls=int(data["warmup_calls"]),
            warmup_wall_ms=float(data.get("warmup_wall_ms") or 0.0),
            sim=data.get("sim"),
        )


def candidate(
    m: Measured, wall_ms: float, *, thermal: dict[str, Any], warmup_ms: float
) -> tuple[float, TimingSummary]:
    """The candidate's scored time and timing summary: statistics of the per-call times, the
    scored time (farm.scoring.scored_time: the trimmed mean, bound to the mean of every timed
    call), the windows as the supervisor timed them, and cross-checks. `wall_ms` is the trusted
    side's own wall time of the whole timing (warm-up included, re-checks not)."""
    stats = scoring.TimingStats.from_samples(m.times_ms)
    scored, statistic = scoring.scored_time(stats)
    details: dict[str, Any] = {
        "statistic": statistic,
        "windows_ms": m.windows_ms,
        "windows": [w.to_json() for w in m.windows],
        "rechecked": m.rechecked,
        "picks_ms": m.picks_ms,
        "warmup_calls": m.warmup_calls,
        "warmup_ms": warmup_ms,
        "warmup_wall_ms": m.warmup_wall_ms,
        "wall_ms_outside": wall_ms,
        "thermal": thermal,
    }
    if m.event_ms:
        details["event_median_ms"] = scoring.TimingStats.from_samples(m.event_ms).median_ms
    return scored, _summary(stats, m.method, details)


def baseline(
    m: Measured, wall_ms: float, *, thermal: dict[str, Any], warmup_ms: float
) -> tuple[float, TimingSummary]:
    """A baseline's scored time and timing summary, scored like the candidate's."""
    stats = scoring.TimingStats.from_samples(m.times_ms)
    scored, statistic = scoring.scored_time(stats)
    details = {
        "statistic": statistic,
        "windows": [w.to_json() for w in m.windows],
        "warmup_calls": m.warmup_calls,
        "warmup_ms": warmup_ms,
        "wall_ms_outside": wall_ms,
        "sum_ms": sum(m.times_ms),
        "thermal": thermal,
    }
    return scored, _summary(stats, m.method, details)


def _summary(stats: scoring.TimingStats, method: str, details: dict[str, Any]) -> TimingSummary:
    return TimingSummary(
        median_ms=stats.median_ms,
        trimmed_mean_ms=stats.trimmed_mean_ms,
        mean_ms=stats.mean_ms,
        std_ms=stats.std_ms,
        min_ms=stats.min_ms,
        max_ms=stats.max_ms,
        count=stats.count,
        ci=Interval(stats.ci95_low_ms, stats.ci95_high_ms),
        rse=None if math.isinf(stats.rse) else stats.rse,
        method=method,
        details={"ci_of": "trimmed-mean", **details},
    )


def window_yardstick(windows: list[WindowRecord]) -> tuple[float, float]:
    """A timing loop's cost from its windows as the supervisor recorded them (ms): per call
    beyond the reported times, and the most one window paid beyond its calls' share (its floor;
    farm.guard.plausibility)."""
    calls = sum(w.calls for w in windows)
    if not calls:
        return 0.0, 0.0
    unexplained = [w.wall_ms - w.sum_ms for w in windows]
    per_call = max(0.0, sum(unexplained) / calls)
    floor = max(u - per_call * w.calls for u, w in zip(unexplained, windows, strict=True))
    return per_call, max(0.0, floor)


def windows_of(timing: TimingSummary | None) -> list[WindowRecord]:
    """The windows a timing summary records (none for a simulated or absent timing)."""
    if timing is None:
        return []
    return [WindowRecord.from_json(w) for w in timing.details.get("windows") or []]


def with_details(timing: TimingSummary, **details: Any) -> TimingSummary:
    """`timing` with keys added to its details."""
    return replace(timing, details={**timing.details, **details})
