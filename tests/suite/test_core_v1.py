"""The pinned suite core-v1: coverage targets, the mandated signatures, formulas and inputs."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from farm.suite.model import CATEGORIES, DTYPE_SIZES, FLOAT_DTYPES
from tests.suite.conftest import (
    core_suite,
    make_inputs,
    problem_params,
    run_reference,
    small_params,
    small_workloads,
)

REQUIRED_CATEGORIES = 13
REQUIRED_PROBLEMS = 42
REQUIRED_BACKWARD = 9
REAL_WORKLOADS = 3
WORKLOAD_BYTES_LIMIT = 4 * 2**30  # every tensor of one workload together, on an H100
SMALL_ELEMENTS_LIMIT = 300_000  # about a second under the Triton interpreter

# FlopCounterMode counts the full S x S score matrix of causal attention; the formulas count
# only the unmasked half, as FLOP conventions for causal attention do.
COUNTER_RATIO = {"attention_causal": 0.5, "attention_gqa": 0.5}
# Problems whose references run ops FlopCounterMode counts (mm, bmm, conv, attention).
MUST_COUNT = {
    "matmul", "matmul_nt", "bmm", "matmul_fp8", "matmul_backward", "attention",
    "attention_causal", "attention_gqa", "attention_decode", "attention_backward", "conv2d",
    "conv1d", "depthwise_conv1d",
}  # fmt: skip


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The raw bytes of a tensor, so that NaN == NaN and -0.0 != 0.0 compare as data."""
    return t.contiguous().view(torch.uint8)


def _nbytes(tensors) -> int:  # type: ignore[no-untyped-def]
    return sum(t.numel() * t.element_size() for t in tensors)


# --- coverage ---------------------------------------------------------------------------------


def test_suite_meets_size_and_category_targets() -> None:
    problems = core_suite().problems.values()
    categories = Counter(p.category for p in problems)
    assert len(problems) >= REQUIRED_PROBLEMS
    assert len(categories) >= REQUIRED_CATEGORIES, categories
    assert set(categories) <= set(CATEGORIES)


def test_backward_problems_are_named_and_counted() -> None:
    backward = [p for p in core_suite().problems.values() if p.pass_ == "backward"]
    assert len(backward) >= REQUIRED_BACKWARD
    for p in backward:
        assert p.name.endswith("_backward"), p.name
    for p in core_suite().problems.values():
        if p.name.endswith("_backward"):
            assert p.pass_ == "backward", p.name


def test_suite_covers_the_kinds_of_problem_it_promises() -> None:
    names = set(core_suite().problems)
    expected = {
        "vector_add", "softmax", "rmsnorm", "matmul", "layernorm", "groupnorm", "log_softmax",
        "cross_entropy", "matmul_fp8", "bmm", "matmul_nt", "attention", "attention_causal",
        "attention_gqa", "attention_decode", "conv2d", "depthwise_conv1d", "conv1d", "cumsum",
        "embedding", "gather_rows", "scatter_add", "topk", "moe_topk_softmax", "swiglu",
        "add_rmsnorm", "rope", "quantize_int8_rowwise", "dequantize_fp8_block",
    }  # fmt: skip
    assert expected <= names, expected - names
    assert core_suite().problem("matmul_fp8").requires == ("fp8",)


def test_suite_uses_float32_and_bfloat16_workloads() -> None:
    dtypes = {w.dtype for p in core_suite().problems.values() for w in p.workloads}
    assert {"float32", "bfloat16"} <= dtypes


@pytest.mark.parametrize("problem", problem_params())
def test_workloads_come_from_real_models(problem) -> None:  # type: ignore[no-untyped-def]
    real = [w for w in problem.workloads if not w.small]
    assert len(real) >= REAL_WORKLOADS
    for w in real:
        assert w.model, f"{problem.name}/{w.id}: no model"
        assert w.source and "model-shapes.md" in w.source, f"{problem.name}/{w.id}: source"


@pytest.mark.parametrize("problem", problem_params())
def test_workload_sizes_fit_an_h100_and_the_interpreter(problem) -> None:  # type: ignore[no-untyped-def]
    for w in problem.workloads:
        assert problem.io_bytes(w) <= WORKLOAD_BYTES_LIMIT, f"{w.id} is too large"
    small = small_workloads(problem)
    assert small, "needs a small workload"
    for w in small:
        elements = problem.io_bytes(w) / DTYPE_SIZES[w.dtype]
        assert elements <= SMALL_ELEMENTS_LIMIT, f"{w.id}: {elements:.0f} elements"


@pytest.mark.parametrize("problem", problem_params())
def test_units_and_tolerances(problem) -> None:  # type: ignore[no-untyped-def]
    # Depthwise convolutions have no channel reduction to put on tensor cores.
    matrix = problem.category in {"gemm", "attention", "convolution"}
    matrix = matrix and problem.name != "depthwise_conv1d"
    assert problem.compute_unit == ("tensor" if matrix else "vector")
    for dtype in problem.dtypes:
        tol = problem.tolerance_for(dtype)
        if dtype == "bfloat16":
            # per element up to ~10 ulp where honest bf16 chains need it (calibrated), but
            # then the normwise bound keeps every element of a low-precision answer out
            assert tol.atol <= 2e-2 and (tol.rtol <= 2e-2 or (tol.norm_rtol or 1) <= 2e-2)
            assert tol.rtol <= 1e-1
        if dtype == "float32":
            assert tol.atol <= 5e-3 and tol.rtol <= 1e-4


# --- the four mandated signatures --------------------------------------------------------------


def _signature_cases():  # type: ignore[no-untyped-def]
    def rmsnorm(x, weight):  # type: ignore[no-untyped-def]
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight

    return [
        ("vector_add", "vector_add(a, b) -> a + b", lambda a, b: a + b),
        ("softmax", "softmax(x) -> torch.softmax(x, dim=-1)", lambda x: torch.softmax(x, dim=-1)),
        (
            "rmsnorm",
            "rmsnorm(x, weight) -> "
            "x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight",
            rmsnorm,
        ),
        ("matmul", "matmul(a, b) -> a @ b", lambda a, b: a @ b),
    ]


@pytest.mark.parametrize(("name", "signature", "formula"), _signature_cases())
@pytest.mark.parametrize("seed", [0, 1])
def test_mandated_signature(name, signature, formula, seed) -> None:  # type: ignore[no-untyped-def]
    problem = core_suite().problem(name)
    assert problem.signature == signature
    small = small_workloads(problem)[0]
    for dtype in ("float32", "bfloat16"):
        w = replace(small, dtype=dtype, axes={k: 2 * v for k, v in small.axes.items()})
        inputs = make_inputs(problem, w, seed)
        (out,) = run_reference(problem, inputs)
        expected = formula(*(t.float() for t in inputs))
        tol = problem.tolerance_for(w.dtype)
        torch.testing.assert_close(out.float(), expected, atol=tol.atol, rtol=tol.rtol)
        if w.dtype == "float32":
            torch.testing.assert_close(out, formula(*inputs), atol=1e-6, rtol=1e-6)


# --- formulas against the reference ------------------------------------------------------------


@pytest.mark.parametrize(("problem", "workload"), small_params())
def test_flop_formula_matches_flop_counter(problem, workload) -> None:  # type: ignore[no-untyped-def]
    inputs = make_inputs(problem, workload)
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        run_reference(problem, inputs)
    counted = counter.get_total_flops()
    if counted == 0:
        assert problem.name not in MUST_COUNT, "its reference should run counted ops"
        pytest.skip("FlopCounterMode does not count this problem's ops")
    expected = counted * COUNTER_RATIO.get(problem.name, 1.0)
    assert problem.flop_count(workload) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("problem", "workload"), small_params())
def test_reference_outputs_match_declared_tensors(problem, workload) -> None:  # type: ignore[no-untyped-def]
    inputs = make_inputs(problem, workload)
    outputs = run_reference(problem, inputs)
    declared = (("input", problem.inputs, inputs), ("output", problem.outputs, outputs))
    for kind, specs, tensors in declared:
        assert len(tensors) == len(specs), f"{len(tensors)} {kind}s, {len(specs)} declared"
        for spec, t in zip(specs, tensors):
            assert tuple(t.shape) == spec.resolved_shape(workload.axes), f"{kind} {spec.name}"
            assert _dtype_name(t) == spec.resolved_dtype(workload.dtype), f"{kind} {spec.name}"
    if problem.bytes == "io":
        assert problem.io_bytes(workload) == _nbytes(inputs + outputs)


@pytest.mark.parametrize("problem", problem_params())
def test_byte_formula_is_at_most_io(problem) -> None:  # type: ignore[no-untyped-def]
    for w in problem.workloads:
        assert 0 < problem.compulsory_bytes(w) <= problem.io_bytes(w), w.id


def test_some_problems_use_byte_formulas() -> None:
    formula = {p.name for p in core_suite().problems.values() if p.bytes != "io"}
    assert {"embedding", "gather_rows"} <= formula


# --- inputs and reference outputs --------------------------------------------------------------


@pytest.mark.parametrize(("problem", "workload"), small_params())
def test_make_inputs_is_deterministic_per_seed(problem, workload) -> None:  # type: ignore[no-untyped-def]
    first, again = make_inputs(problem, workload, 7), make_inputs(problem, workload, 7)
    other = make_inputs(problem, workload, 8)
    for a, b in zip(first, again):
        assert torch.equal(_bits(a), _bits(b))
    assert any(not torch.equal(_bits(a), _bits(b)) for a, b in zip(first, other))


@pytest.mark.parametrize(("problem", "workload"), small_params())
def test_reference_outputs_are_finite_and_informative(problem, workload) -> None:  # type: ignore[no-untyped-def]
    outputs = run_reference(problem, make_inputs(problem, workload))
    for spec, out in zip(problem.outputs, outputs):
        values = out.float()
        if _dtype_name(out) in FLOAT_DTYPES:
            assert torch.isfinite(values).all(), spec.name
        assert values.abs().sum() > 0, f"{spec.name} is all zero"
        if out.numel() > 1:
            assert values.flatten().unique().numel() > 1, f"{spec.name} is constant"


@pytest.mark.parametrize(("problem", "workload"), small_params())
def test_reference_does_not_modify_its_inputs(problem, workload) -> None:  # type: ignore[no-untyped-def]
    inputs = make_inputs(problem, workload)
    copies = [t.clone() for t in inputs]
    run_reference(problem, inputs)
    for t, c in zip(inputs, copies):
        assert torch.equal(_bits(t), _bits(c))


def test_tf32_fails_fp32_matmul() -> None:
    """Rounding inputs to TF32 (10-bit mantissa) must break the fp32 GEMM tolerance."""
    problem = core_suite().problem("matmul")
    w = next(w for w in problem.workloads if w.small and w.dtype == "float32")
    a, b = make_inputs(problem, dict_workload(w, M=256, N=256, K=1024))
    (ref,) = run_reference(problem, (a, b))
    tf32 = _round_to_tf32(a) @ _round_to_tf32(b)
    tol = problem.tolerance_for("float32")
    assert not torch.allclose(tf32, ref, atol=tol.atol, rtol=tol.rtol)
    blocked = sum(a[:, k : k + 32] @ b[k : k + 32] for k in range(0, 1024, 32))
    assert torch.allclose(blocked, ref, atol=tol.atol, rtol=tol.rtol)


def dict_workload(w, **axes):  # type: ignore[no-untyped-def]
    return replace(w, axes={**w.axes, **axes})


def _round_to_tf32(x: torch.Tensor) -> torch.Tensor:
    bits = x.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def test_formulas_are_physically_sensible() -> None:
    """Every workload does some work and the big GEMMs land in the TFLOP range."""
    qkv = core_suite().problem("matmul").workload("llama3-8b-qkv-4k")
    assert core_suite().problem("matmul").flop_count(qkv) == pytest.approx(2.06e11, rel=1e-2)
    decode = core_suite().problem("attention_decode")
    w = decode.workload("llama3-8b-decode-b32-kv8k")
    assert math.isclose(decode.io_bytes(w), 1.07e9, rel_tol=0.01)
