from types import SimpleNamespace

import torch

from farm.harness import seeds
from farm.harness.timing import (
    END_KERNEL,
    FLUSH_KERNEL,
    CpuTimer,
    TimingPolicy,
    _spans,
    stop_rule,
)


def _event(name, start, end):
    return SimpleNamespace(
        name=name,
        device_type=torch.autograd.DeviceType.CUDA,
        time_range=SimpleNamespace(start=start, end=end),
    )


def test_spans_cover_every_stream_between_markers():
    # Call 1: one kernel 10-20 us and a side-stream kernel 15-40 us -> span 30 us.
    # Call 2: no work at all -> span 0 (a cached answer shows up as zero time).
    prof = SimpleNamespace(
        events=lambda: [
            _event(f"triton_{FLUSH_KERNEL}_0", 0, 9),
            _event("my_kernel", 10, 20),
            _event("side_stream_kernel", 15, 40),
            _event(END_KERNEL, 41, 42),
            _event(FLUSH_KERNEL, 50, 59),
            _event(END_KERNEL, 60, 61),
        ]
    )
    assert _spans(prof) == [0.030, 0.0]


def test_stop_rule_needs_enough_stable_samples():
    policy = TimingPolicy(min_calls=30, stable_windows=4, stable_tol=0.004, target_rse=0.001)
    assert stop_rule([1.0] * 40, [1.0] * 4, policy)
    assert not stop_rule([1.0] * 20, [1.0] * 4, policy)  # too few calls
    assert not stop_rule([1.0] * 40, [1.0, 1.02, 1.0, 1.0], policy)  # still drifting
    assert not stop_rule([1.0, 1.2] * 20, [1.1] * 4, policy)  # too noisy


def test_cpu_timer_returns_every_rechecked_call_even_past_the_budget():
    policy = TimingPolicy(warmup_ms=0, min_calls=5, window=5, budget_ms=0.001)
    run = CpuTimer(llc_bytes=1 << 20).run(
        lambda xs: [xs[0] * 2], lambda i: [torch.full((4,), float(i))], policy, {3, 17}
    )
    assert sorted(run.rechecks) == [3, 17]
    assert torch.equal(run.rechecks[17][0], torch.full((4,), 34.0))
    assert len(run.times_ms) >= 18


def test_seeds_are_stable_and_distinct():
    assert seeds.derive(1, "softmax", "w", 0) == seeds.derive(1, "softmax", "w", 0)
    assert seeds.derive(1, "softmax", "w", 0) != seeds.derive(1, "softmax", "w", 1)
    assert seeds.derive(1, "a") < 2**63


def test_secret_seed_is_removed_from_the_environment(monkeypatch):
    monkeypatch.setenv("FARM_SECRET_SEED", "hidden")
    assert seeds.secret_base() == "hidden"
    import os

    assert "FARM_SECRET_SEED" not in os.environ
    assert seeds.secret_base() != seeds.secret_base()  # random when unset


def test_every_timed_evaluation_draws_a_fresh_base(monkeypatch):
    monkeypatch.delenv("FARM_SECRET_SEED", raising=False)
    one, fresh = seeds.choose_base(leaderboard=False, timed=True, given=None)
    two, _ = seeds.choose_base(leaderboard=False, timed=True, given=None)
    assert fresh and one != two  # a submission cannot precompute the calls to come
    assert seeds.choose_base(leaderboard=False, timed=False, given=None) == (
        seeds.PUBLIC_BASE,
        False,
    )  # a correctness run is reproducible as it is
    assert seeds.choose_base(leaderboard=False, timed=True, given=7) == (7, False)
    monkeypatch.setenv("FARM_SECRET_SEED", "hidden")
    assert seeds.choose_base(leaderboard=True, timed=True, given=7) == ("hidden", True)
