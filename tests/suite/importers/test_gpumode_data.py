"""GPU MODE problems with fp8 / packed fp4 data and with structured data (tuples, dicts of
tensors, config dicts), and the problems a host cannot run, from tests/fixtures/gpumode/lowp."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from farm.errors import FarmError, SuiteError
from farm.suite.importers import gpumode, structured
from farm.suite.loader import load_suite
from tests.suite.importers.conftest import FIXTURES, SUBMISSIONS, evaluate

SUITE = "gm-test"
LOWP = FIXTURES / "gpumode" / "lowp"


def test_fp8_inputs_keep_their_dtype_and_destination_buffer(imported):
    problem = load_suite(SUITE).problem("lowp-fp8_block_mm")
    assert problem.dtypes == ("float8_e4m3fnuz",)
    assert problem.extra["writable_inputs"] == [3]  # c, which ref_kernel writes
    w = problem.workload("test-0")
    assert problem.io_bytes(w) == 16 * 64 + 32 * 64 + 16 * 4 + 2 * (16 * 32 * 2)
    # host memory: the fp8 and bf16 tensors at float32 width
    assert problem.host_bytes(w) == 4 * (16 * 64 + 32 * 64 + 16 + 2 * 16 * 32)


def test_fp8_candidates_are_judged_by_the_sources_checker(imported):
    doc = evaluate(SUBMISSIONS / "fp8_block_mm_custom_kernel.py", SUITE, "lowp-fp8_block_mm")
    assert doc["verdict"] == "PASSED", doc["reasons"]
    doc = evaluate(SUBMISSIONS / "fp8_block_mm_unscaled.py", SUITE, "lowp-fp8_block_mm")
    assert doc["verdict"] == "INCORRECT"
    assert "own checker" in str(doc["reasons"])


def test_structured_data_is_listed_per_dtype_when_its_tensors_vary(imported):
    problem = load_suite(SUITE).problem("lowp-routed_mix")
    assert problem.extra["gpumode_data"] == "structured"
    assert "'top_k': 1" in problem.extra["gpumode_structure"]
    assert [s.name for s in problem.inputs] == ["data_float16", "data_float32"]
    assert problem.input_tensors() == 6  # x, router and 4 experts at the largest workload
    bench = problem.workload("bench-0")
    assert problem.io_bytes(bench) == 2 * (256 * 64 + 4 * 64 * 64) + 4 * 4 * 64 + 2 * 256 * 64


def test_custom_kernel_receives_the_structure_gpu_mode_gives(imported):
    doc = evaluate(SUBMISSIONS / "routed_mix_custom_kernel.py", SUITE, "lowp-routed_mix")
    assert doc["verdict"] == "PASSED", doc["reasons"]
    doc = evaluate(SUBMISSIONS / "routed_mix_first_expert.py", SUITE, "lowp-routed_mix")
    assert doc["verdict"] == "INCORRECT"


def test_fp4_matmul_needs_fp4_hardware_and_is_not_runnable_on_cpu(imported):
    from farm.harness.targets import resolve_target

    problem = load_suite(SUITE).problem("lowp-fp4_scaled_mm")
    assert problem.requires == ("fp4",)
    assert problem.inputs[0].resolved_dtype(problem.dtypes[0]) == "float4_e2m1fn_x2"
    with pytest.raises(FarmError, match="not runnable on device cpu"):
        resolve_target("cpu", None).select(problem, None)


def test_forward_backward_problem_is_judged_as_its_eval_py_judges(imported):
    """A problem whose eval.py imports two functions (princeton/cross_entropy_py's format):
    its batch size becomes an axis, a call runs forward then backward, eval.py's allclose
    judges both outputs."""
    suite = load_suite(SUITE)
    problem = suite.problem("pair-row_loss_py")
    assert (suite.root / problem.name / "source" / "utils.py").is_file()  # its ATOL, RTOL
    assert problem.workload("test-0").axes == {"batch_size": 64, "vocab_size": 256}
    assert [s.name for s in problem.outputs] == ["loss", "grad"]
    doc = evaluate(SUBMISSIONS / "row_loss_pair.py", SUITE, "pair-row_loss_py")
    assert doc["verdict"] == "PASSED", doc["reasons"]
    doc = evaluate(SUBMISSIONS / "row_loss_pair_no_grad_scale.py", SUITE, "pair-row_loss_py")
    assert doc["verdict"] == "INCORRECT"
    assert "row_loss_backward: not allclose" in str(doc["reasons"])


@pytest.mark.parametrize(
    ("folder", "reason"),
    [
        ("needs_aiter", "needs the `aiter` package (AMD ROCm); not runnable on this host"),
        ("two_ranks", "multi-GPU problem (needs world_size/rank); single-GPU farm nodes"),
    ],
)
def test_problems_this_host_cannot_run_say_why(folder, reason):
    with pytest.raises(SuiteError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        gpumode.problem_draft(LOWP / folder, FIXTURES / "gpumode")


@dataclasses.dataclass
class _Config:
    heads: int
    weight: torch.Tensor


class _Cache(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("data", torch.zeros(2, 3))
        self.scale = torch.nn.Parameter(torch.ones(1))
        self.length = 1


def test_structure_rebuilds_dataclasses_modules_and_constants():
    data = (_Config(4, torch.ones(2)), {"x": torch.arange(3.0), "mode": "a"}, _Cache(), 7)
    tensors, structure = structured.flatten(data)
    assert [tuple(t.shape) for t in tensors] == [(2,), (3,), (1,), (2, 3)]
    assert "_Cache(module)" in structure.describe()
    rebuilt = structured.unflatten(structure, [t + 1 for t in tensors])
    config, mapping, cache, seven = rebuilt
    assert config.heads == 4 and torch.equal(config.weight, torch.full((2,), 2.0))
    assert mapping["mode"] == "a" and seven == 7
    assert isinstance(cache, _Cache) and cache.length == 1 and cache is not data[2]
    assert isinstance(cache.scale, torch.nn.Parameter) and float(cache.scale.detach()) == 2.0
    assert torch.equal(cache.data, torch.ones(2, 3)) and torch.equal(
        data[2].data, torch.zeros(2, 3)
    )
    assert structured.kind(data) == "structured" and structured.kind(tuple(tensors)) == "tuple"
