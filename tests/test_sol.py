"""SOL bounds: hand-computed cases, feature checks, and every workload of core-v1."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from farm.hardware.specs import all_specs, get_spec
from farm.sol import (
    UnsupportedWorkload,
    bound_from_counts,
    compute_dtype,
    floor_ms,
    sol_bound,
    sol_table,
)
from farm.suite.loader import Suite, load_problem, load_suite
from farm.suite.model import Problem, TensorSpec, Tolerance, Workload

VECTOR_ADD = Path(__file__).parents[1] / "farm/suite/suites/core-v1/vector_add"


def make_problem(
    name: str,
    *,
    flops: str,
    unit: str,
    inputs: tuple[TensorSpec, ...],
    outputs: tuple[TensorSpec, ...],
    workloads: tuple[Workload, ...],
    requires: tuple[str, ...] = (),
    bytes_: str = "io",
) -> Problem:
    dtypes = tuple(sorted({w.dtype for w in workloads}))
    return Problem(
        name=name,
        category="gemm",
        description="synthetic",
        signature=f"{name}(...)",
        inputs=inputs,
        outputs=outputs,
        dtypes=dtypes,
        tolerance={d: Tolerance(1e-2, 1e-2) for d in dtypes},
        flops=flops,
        compute_unit=unit,
        bytes=bytes_,
        workloads=workloads,
        requires=requires,
    )


def matmul(dtype: str, n: int = 8192, requires: tuple[str, ...] = ()) -> Problem:
    return make_problem(
        f"matmul_{dtype}",
        flops="2*M*N*K",
        unit="tensor",
        inputs=(TensorSpec("a", ("M", "K")), TensorSpec("b", ("K", "N"))),
        outputs=(TensorSpec("out", ("M", "N")),),
        workloads=(Workload("square", {"M": n, "N": n, "K": n}, dtype),),
        requires=requires,
    )


def test_vector_add_16m_fp32_on_h200_is_memory_bound():
    problem = load_problem(VECTOR_ADD)
    w = problem.workload("llama3-8b-residual-4k")
    b = sol_bound(problem, w, get_spec("nvidia-h200"))
    assert b.bytes == 201326592  # 3 x 16M x 4 B
    assert b.flops == 16777216
    assert b.memory_ms == pytest.approx(201326592 / 4.8e12 * 1e3)  # 41.94 µs
    assert b.compute_ms == pytest.approx(16777216 / 67e12 * 1e3)
    assert b.time_ms == b.memory_ms and b.bound == "memory"
    assert b.bandwidth == 4.8e12 and b.peak_flops == 67e12


def test_bf16_matmul_on_h100_is_compute_bound():
    problem = matmul("bfloat16")
    b = sol_bound(problem, problem.workloads[0], get_spec("nvidia-h100"))
    assert b.flops == 2 * 8192**3
    assert b.time_ms == pytest.approx(2 * 8192**3 / 989.4e12 * 1e3)  # 1.111 ms
    assert b.bytes == 3 * 8192 * 8192 * 2
    assert b.bound == "compute"


def test_fp32_matmul_uses_the_fastest_fp32_input_tensor_path():
    problem = matmul("float32")
    w = problem.workloads[0]
    assert sol_bound(problem, w, get_spec("nvidia-h100")).peak_flops == pytest.approx(494.7e12)
    assert sol_bound(problem, w, get_spec("amd-mi355x")).peak_flops == pytest.approx(157.3e12)


def test_fp8_matmul_needs_the_feature():
    problem = matmul("float8_e4m3fn", requires=("fp8",))
    w = problem.workloads[0]
    b = sol_bound(problem, w, get_spec("nvidia-h100"))
    assert b.peak_flops == pytest.approx(1978.9e12)
    for hw in ("nvidia-a100", "npu-sim-v1"):
        with pytest.raises(UnsupportedWorkload, match="lacks fp8"):
            sol_bound(problem, w, get_spec(hw))


def scaled_fp8_matmul(**extra: str) -> Problem:
    """fp8 x fp8 with fp32 scales, written as bfloat16: the workload dtype is the output's."""
    p = make_problem(
        "matmul_fp8",
        flops="2*M*N*K",
        unit="tensor",
        inputs=(
            TensorSpec("a", ("M", "K"), "float8_e4m3fn"),
            TensorSpec("w", ("N", "K"), "float8_e4m3fn"),
            TensorSpec("scale_a", (1,), "float32"),
            TensorSpec("scale_b", (1,), "float32"),
        ),
        outputs=(TensorSpec("out", ("M", "N")),),
        workloads=(Workload("4k", {"M": 4096, "N": 57344, "K": 8192}, "bfloat16"),),
        requires=("fp8",),
    )
    return replace(p, extra=dict(extra))


def test_fp8_operands_set_the_peak_not_the_output_dtype():
    problem = scaled_fp8_matmul()
    w = problem.workloads[0]
    assert compute_dtype(problem, w) == "float8_e4m3fn"
    b = sol_bound(problem, w, get_spec("nvidia-h100"))
    assert b.peak_flops == pytest.approx(1978.9e12) and b.bound == "compute"
    assert b.bytes == 4096 * 8192 + 57344 * 8192 + 2 * 4 + 4096 * 57344 * 2  # fp8 in, bf16 out


def test_mixed_operands_run_at_the_widest_and_extra_overrides():
    w8a16 = make_problem(
        "w8a16",
        flops="2*M*N*K",
        unit="tensor",
        inputs=(TensorSpec("a", ("M", "K")), TensorSpec("w", ("N", "K"), "int8")),
        outputs=(TensorSpec("out", ("M", "N")),),
        workloads=(Workload("w", {"M": 4096, "N": 4096, "K": 4096}, "bfloat16"),),
    )
    assert compute_dtype(w8a16, w8a16.workloads[0]) == "bfloat16"
    forced = scaled_fp8_matmul(compute_dtype="bfloat16")
    assert compute_dtype(forced, forced.workloads[0]) == "bfloat16"


def test_a_dtype_without_a_path_is_unsupported_not_a_crash():
    problem = matmul("float8_e4m3fn")  # forgot `requires`: the table still answers
    with pytest.raises(UnsupportedWorkload, match="no tensor path"):
        sol_bound(problem, problem.workloads[0], get_spec("nvidia-a100"))


def test_integer_workloads_use_the_vector_int32_or_fp32_rate():
    problem = make_problem(
        "histogram",
        flops="N",
        unit="vector",
        inputs=(TensorSpec("x", ("N",)),),
        outputs=(TensorSpec("out", ("N",)),),
        workloads=(Workload("w", {"N": 1 << 20}, "int64"),),
    )
    w = problem.workloads[0]
    assert sol_bound(problem, w, get_spec("nvidia-h100")).peak_flops == pytest.approx(67e12)
    npu = get_spec("npu-sim-v1")
    assert sol_bound(problem, w, npu).peak_flops == npu.peak("int32", "vector")


def test_bound_from_counts():
    b = bound_from_counts(1e12, 1e9, 1e15, 1e12)  # 1 ms compute, 1 ms memory: a tie
    assert b.time_ms == pytest.approx(1.0) and b.bound == "memory"
    assert bound_from_counts(2e12, 1e9, 1e15, 1e12).bound == "compute"
    with pytest.raises(ValueError):
        bound_from_counts(-1.0, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        bound_from_counts(math.nan, 1.0, 1.0, 1.0)


def test_floor_leaves_out_output_bytes_the_llc_can_hold():
    problem = load_problem(VECTOR_ADD)
    h100 = get_spec("nvidia-h100")
    w = Workload("mid", {"N": 4 << 20}, "float32")  # output 16 MiB < 50 MiB L2
    b = sol_bound(problem, w, h100)
    assert floor_ms(problem, w, h100) == pytest.approx(b.time_ms * 2 / 3)
    big = problem.workload("llama3-8b-residual-4k")  # output 64 MiB > 50 MiB L2
    floor = floor_ms(problem, big, h100)
    assert floor == pytest.approx((201326592 - 50 * 2**20) / 3.35e12 * 1e3)
    assert floor < sol_bound(problem, big, h100).time_ms


def test_sol_table_reports_unsupported_rows():
    problems = {p.name: p for p in (matmul("bfloat16"), matmul("float8_e4m3fn", requires=("fp8",)))}
    suite = Suite(name="synthetic", root=Path("."), problems=problems, hash=None)
    rows = sol_table(suite, get_spec("nvidia-a100"))
    by_problem = {r["problem"]: r for r in rows}
    ok, fp8 = by_problem["matmul_bfloat16"], by_problem["matmul_float8_e4m3fn"]
    assert ok["supported"] and ok["bound"] == "compute"
    assert ok["sol_ms"] == pytest.approx(2 * 8192**3 / 312e12 * 1e3)
    assert not fp8["supported"] and "fp8" in fp8["reason"]


def test_every_core_v1_workload_has_a_finite_positive_bound():
    # verify=False: the manifest is the suite tests' concern; this checks the formulas only.
    suite = load_suite("core-v1", verify=False)
    assert "vector_add" in suite.problems
    for spec in all_specs():
        for row in sol_table(suite, spec):
            if not row["supported"]:
                assert row["reason"], row
                continue
            where = f"{row['problem']}/{row['workload']} on {spec.name}"
            assert math.isfinite(row["sol_ms"]) and row["sol_ms"] > 0, where
            assert row["flops"] >= 0 and row["bytes"] > 0, where


def test_npu_sim_bound_includes_the_launch_its_cost_model_charges_and_gpus_do_not():
    from farm.hardware.npu_sim.spec import NPU_SIM_V1

    w = Workload("w", {"N": 4096}, "float32")
    problem = make_problem(
        "scale",
        flops="N",
        unit="vector",
        inputs=(TensorSpec("x", ("N",)),),
        outputs=(TensorSpec("out", ("N",)),),
        workloads=(w,),
    )
    npu = sol_bound(problem, w, get_spec("npu-sim-v1"))
    launch_ms = (NPU_SIM_V1.launch_overhead_s + NPU_SIM_V1.program_overhead_s) * 1e3
    assert npu.overhead_ms == pytest.approx(launch_ms)
    assert npu.time_ms == pytest.approx(npu.memory_ms + launch_ms)
    assert npu.bound == "overhead"  # 32 KiB moves in 20 ns; a launch costs 8.5 us
    gpu = sol_bound(problem, w, get_spec("nvidia-h100"))
    assert gpu.overhead_ms == 0.0 and gpu.time_ms == gpu.memory_ms and gpu.bound == "memory"
