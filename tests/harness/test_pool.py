"""The warm worker pool: candidates are never reused, baselines are, and results are unchanged."""

from __future__ import annotations

import time

import pytest

from farm.harness.pool import WorkerPool
from farm.harness.supervisor import evaluate

NATIVE = "def kernel(a, b):\n    return a + b\n"


@pytest.fixture
def pool(sandbox_ready):
    p = WorkerPool(device="npu-sim")
    yield p
    p.close()


def _wait_ready(pool: WorkerPool, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while pool._ready.empty() and time.monotonic() < end:
        time.sleep(0.2)


@pytest.mark.slow
def test_pooled_evaluations_match_and_start_warm(tmp_path, pool):
    path = tmp_path / "k.py"
    path.write_text(NATIVE)
    _wait_ready(pool)
    first = evaluate(path, problem="vector_add", device="npu-sim", pool=pool).to_json()
    _wait_ready(pool)
    second = evaluate(path, problem="vector_add", device="npu-sim", pool=pool).to_json()
    assert first["verdict"] == second["verdict"] == "PASSED"
    assert first["workloads"][0]["time_ms"] == second["workloads"][0]["time_ms"]  # simulated
    assert second["timing"]["phases_s"]["sandbox_start"] < 1.0
    assert "eager" not in pool._baselines  # npu-sim's trusted replay counts the baseline
    fresh = evaluate(path, problem="vector_add", device="npu-sim").to_json()
    assert fresh["workloads"][0]["time_ms"] == first["workloads"][0]["time_ms"]


@pytest.mark.slow
def test_a_candidate_worker_serves_one_submission(pool):
    a = pool.candidate()
    b = pool.candidate()
    assert a.proc.pid != b.proc.pid
    pool.discard(a, wait=True)
    pool.discard(b, wait=True)
    assert a.proc.poll() is not None and not a.spec.workdir.exists()


@pytest.mark.slow
def test_a_broken_submission_does_not_poison_the_pool(tmp_path, pool):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\ndef kernel(a, b):\n    os._exit(3)\n")
    good = tmp_path / "good.py"
    good.write_text(NATIVE)
    assert (
        evaluate(bad, problem="vector_add", device="npu-sim", pool=pool).to_json()["verdict"]
        != "PASSED"
    )
    assert (
        evaluate(good, problem="vector_add", device="npu-sim", pool=pool).to_json()["verdict"]
        == "PASSED"
    )


@pytest.mark.slow
def test_several_workers_get_ready_at_once(sandbox_ready, monkeypatch):
    """Each worker is waited on by a thread of its own: all are started before the first is
    ready (one starter thread preparing them one after the other made jobs wait)."""
    spawned: list[float] = []
    spawn = WorkerPool._spawn

    def timed_spawn(self):
        spawned.append(time.monotonic())
        return spawn(self)

    monkeypatch.setattr(WorkerPool, "_spawn", timed_spawn)
    p = WorkerPool(device="npu-sim", ready_candidates=3)
    try:
        first = p.candidate()
        got_first = time.monotonic()
        assert len(spawned) >= 3 and sorted(spawned)[2] < got_first
        second = p.candidate(timeout=5)  # getting ready alongside the first
        assert first.proc.pid != second.proc.pid
        for w in (first, second):
            p.discard(w, wait=True)
    finally:
        p.close()


@pytest.mark.slow
def test_a_warmed_worker_serves_its_job(tmp_path, sandbox_ready):
    """The warm-up's reply is read before the worker is handed out: the job's first reply is
    its own."""
    path = tmp_path / "k.py"
    path.write_text(NATIVE)
    p = WorkerPool(device="npu-sim", warm=True, ready_candidates=1)
    try:
        doc = evaluate(path, problem="vector_add", device="npu-sim", pool=p).to_json()
        assert doc["verdict"] == "PASSED", doc
    finally:
        p.close()


def test_a_failed_warm_up_is_the_job_s_error(sandbox_ready, monkeypatch):
    from farm.harness import channel

    monkeypatch.setattr(
        channel.WorkerProcess,
        "receive",
        lambda self, **kw: ({"op": "warm", "ok": False, "detail": "no device"}, []),
    )
    p = WorkerPool(device="npu-sim", warm=True, ready_candidates=1)
    try:
        with pytest.raises(channel.WorkerDied, match="warm-up failed: no device"):
            p.candidate(timeout=120)
    finally:
        p.close()
