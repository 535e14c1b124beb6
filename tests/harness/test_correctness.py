import torch

from farm.harness.correctness import compare
from farm.suite.loader import load_suite

CPU = torch.device("cpu")


def _problem():
    return load_suite("core-v1").problem("softmax")


def _codes(outputs, expected):
    reasons, _ = compare(outputs, expected, _problem(), device=CPU)
    return [r["code"] for r in reasons]


def test_identical_outputs_pass():
    ref = torch.softmax(torch.randn(8, 16), -1)
    assert _codes([ref.clone()], [ref]) == []


def test_one_element_outside_tolerance_fails():
    ref = torch.softmax(torch.randn(8, 16), -1)
    out = ref.clone()
    out[7, 15] += 1e-3
    assert _codes([out], [ref]) == ["MISMATCH"]


def test_nan_inf_zero_dtype_shape_count():
    ref = torch.softmax(torch.randn(8, 16), -1)
    nan = ref.clone()
    nan[0, 0] = float("nan")
    assert _codes([nan], [ref]) == ["NON_FINITE"]
    assert _codes([torch.zeros_like(ref)], [ref]) == ["ALL_ZERO"]
    assert _codes([ref.double()], [ref]) == ["WRONG_DTYPE"]
    assert _codes([ref[:, :8]], [ref]) == ["WRONG_SHAPE"]
    assert _codes([ref, ref], [ref]) == ["OUTPUT_COUNT"]


def test_integer_outputs_must_match_exactly():
    ref = torch.arange(10)
    out = ref.clone()
    out[3] = 4
    assert _codes([out], [ref]) == ["MISMATCH"]
    assert _codes([ref.clone()], [ref]) == []


def test_error_statistics_are_reported():
    ref = torch.softmax(torch.randn(4, 4), -1)
    reasons, stats = compare([ref + 1e-7], [ref], _problem(), device=CPU)
    assert reasons == [] and 0 < stats["max_abs_err"] < 1e-6
