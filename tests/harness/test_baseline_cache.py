"""Baselines measured once per node and reused (farm.harness.baselines)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from farm.harness import baselines
from farm.harness.supervisor import evaluate
from farm.harness.timing import TimingPolicy

SCOPE = baselines.Scope(
    suite="core-v1",
    suite_hash="abc",
    problem="softmax",
    hardware="cpu",
    device="cpu",
    device_index=0,
    policy=TimingPolicy(),
)


def test_the_key_covers_what_a_baseline_depends_on(tmp_path):
    cache = baselines.BaselineCache(SCOPE, root=tmp_path)
    cache.put("small", "eager", {"wall_ms": 1.0})
    assert cache.get("small", "eager")["wall_ms"] == 1.0
    assert cache.get("small", "compile") is None and cache.get("large", "eager") is None
    for changed in (
        replace(SCOPE, suite_hash="def"),
        replace(SCOPE, hardware="h100"),
        replace(SCOPE, policy=TimingPolicy(budget_ms=100)),
    ):
        assert baselines.BaselineCache(changed, root=tmp_path).get("small", "eager") is None
    stale = baselines.BaselineCache(SCOPE, root=tmp_path, ttl_s=0.0)
    time.sleep(0.01)
    assert stale.get("small", "eager") is None


def test_an_unwritable_cache_is_skipped(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = baselines.BaselineCache(SCOPE, root=blocker / "baselines")
    cache.put("small", "eager", {"wall_ms": 1.0})  # no error
    assert cache.get("small", "eager") is None


def test_a_second_evaluation_reuses_the_baseline(tmp_path, monkeypatch, sandbox_ready):
    monkeypatch.setenv("FARM_BASELINE_CACHE", "1")
    monkeypatch.setenv("FARM_HOME", str(tmp_path))
    source = tmp_path / "k.py"
    source.write_text("def kernel(a, b):\n    return a + b\n")

    def run() -> dict:
        return evaluate(
            source,
            problem="vector_add",
            device="cpu",
            mode="benchmark",
            workloads=["small-4k"],
            policy={"budget_ms": 100, "warmup_ms": 10},
        ).to_json()

    first, second = run(), run()
    assert first["verdict"] == second["verdict"] == "PASSED"
    (a,), (b,) = first["workloads"], second["workloads"]
    assert "measured_at" not in a["baseline_timing"]["eager"]
    assert b["baseline_timing"]["eager"]["measured_at"] > 0
    assert b["baseline_ms"]["eager"] == a["baseline_ms"]["eager"]
    assert "baselines" not in second["timing"]["phases_s"] or (
        second["timing"]["phases_s"]["baselines"] < first["timing"]["phases_s"]["baselines"]
    )
    assert list(Path(tmp_path / "baselines").glob("*.json"))
