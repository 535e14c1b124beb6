"""Simulated time is never below the speed-of-light bound."""

from __future__ import annotations

import importlib.util
import random

import pytest
import torch

from farm.hardware import npu_sim
from farm.hardware.npu_sim.costmodel import (
    CostParams,
    ProgramRecord,
    launch_s,
    merge_work,
    sol_floor_s,
)
from farm.hardware.npu_sim.spec import NPU_SIM_V1
from farm.hardware.specs import get_spec
from farm.sol import sol_bound
from farm.suite.loader import load_suite
from tests.hardware.npu_sim import kernels as k

_KERNELS = {
    "vector_add": lambda a, b: k.triton_add(a, b, block=512),
    "softmax": k.triton_softmax,
    "matmul": lambda a, b: k.matmul_tiled(a, b, 32, 32, 32),
}


def _reference(problem):
    spec = importlib.util.spec_from_file_location(f"ref_{problem.name}", problem.reference_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _small_cases():
    suite = load_suite("core-v1")
    for name in ("vector_add", "softmax", "rmsnorm", "matmul"):
        problem = suite.problem(name)
        for w in problem.workloads:
            if w.small:
                yield pytest.param(problem, w, id=f"{name}-{w.id}")


@pytest.mark.parametrize(("problem", "workload"), list(_small_cases()))
def test_reference_and_kernels_at_or_above_workload_sol(problem, workload):
    ref = _reference(problem)
    gen = torch.Generator().manual_seed(1)
    inputs = ref.make_inputs(workload.axes, getattr(torch, workload.dtype), "cpu", gen)
    # the bound charges one launch, so a one-launch kernel can meet it: equal up to rounding
    sol_ms = sol_bound(problem, workload, get_spec("npu-sim-v1")).time_ms * (1 - 1e-12)
    candidates = [ref.reference] + ([_KERNELS[problem.name]] if problem.name in _KERNELS else [])
    for fn in candidates:
        report = npu_sim.measure(fn, inputs, floor_ms=sol_ms)
        assert report.time_ms >= sol_ms
        assert report.time_ms >= report.sol_ms


def _random_program(rng: random.Random) -> ProgramRecord:
    work = [
        (
            rng.choice(["tensor", "vector"]),
            rng.choice(["float32", "bfloat16", "float64"]),
            rng.randrange(0, 10**8),
        )
        for _ in range(rng.randrange(0, 3))
    ]
    return ProgramRecord(rng.randrange(0, 10**7), rng.randrange(0, 10**7), merge_work(work))


@pytest.mark.parametrize("seed", range(20))
def test_launch_time_never_below_chip_roofline_without_overheads(seed):
    """With zero overheads the schedule alone must still respect the chip's roofline."""
    base = CostParams.from_spec(NPU_SIM_V1)
    params = CostParams(**{**vars(base), "launch_s": 0.0, "program_s": 0.0})
    rng = random.Random(seed)
    programs = [_random_program(rng) for _ in range(rng.randrange(1, 200))]
    work = merge_work(w for p in programs for w in p.work)
    nbytes = sum(p.read_bytes + p.write_bytes for p in programs)
    assert launch_s(programs, params) >= sol_floor_s(work, nbytes, params) * (1 - 1e-12)


def test_floor_violation_is_an_integrity_failure():
    x, y = torch.randn(256), torch.randn(256)
    with pytest.raises(npu_sim.SimIntegrityError, match="below_floor"):
        npu_sim.measure(lambda a, b: a + b, (x, y), floor_ms=1.0)


@pytest.mark.parametrize("seed", range(20))
def test_launch_time_never_below_the_bound_with_its_launch_floor(seed):
    """The class's SOL bound adds launch_floor_s (one launch of one program) to the roofline:
    no launch the model costs is faster than that."""
    params = CostParams.from_spec(NPU_SIM_V1)
    rng = random.Random(seed)
    programs = [_random_program(rng) for _ in range(rng.randrange(1, 200))]
    work = merge_work(w for p in programs for w in p.work)
    nbytes = sum(p.read_bytes + p.write_bytes for p in programs)
    floor = sol_floor_s(work, nbytes, params) + get_spec("npu-sim-v1").launch_floor_s
    assert launch_s(programs, params) >= floor * (1 - 1e-12)
