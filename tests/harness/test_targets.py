"""Which workloads a device runs by default."""

from farm.harness.targets import resolve_target
from farm.suite.loader import load_suite

SOFTMAX = load_suite("core-v1").problem("softmax")


def test_npu_sim_runs_every_workload_at_its_real_size_for_boards():
    npu = resolve_target("npu-sim", None)
    every = npu.select(SOFTMAX, None, every=True)
    assert [w.id for w in every.run] == [w.id for w in SOFTMAX.workloads] and not every.skipped
    assert all(w.small for w in npu.select(SOFTMAX, None).run)


def test_npu_sim_runs_a_named_real_workload():
    named = resolve_target("npu-sim", None).select(SOFTMAX, ["llama3-8b-logits-4k"])
    assert [w.id for w in named.run] == ["llama3-8b-logits-4k"] and not named.skipped


def test_cpu_keeps_to_small_workloads_by_default():
    cpu = resolve_target("cpu", None)
    assert all(w.small for w in cpu.select(SOFTMAX, None, every=True).run)
