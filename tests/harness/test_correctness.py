import torch

from farm.harness.correctness import compare
from farm.suite.loader import load_suite

CPU = torch.device("cpu")


def _problem():
    return load_suite("core-v1").problem("softmax")


def _codes(outputs, expected):
    reasons, _ = compare(outputs, expected, _problem(), device=CPU)
    return [r.code for r in reasons]


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


def _bf16_softmax(seed=0):
    x = 2 * torch.randn(64, 256, generator=torch.Generator().manual_seed(seed))
    return x.bfloat16(), torch.softmax(x.bfloat16().float(), -1).bfloat16()


def test_honest_bf16_chain_passes_and_fp8_storage_fails_normwise():
    """The calibrated bf16 bounds: an unfused chain of bf16 ops passes; the same answer stored
    through float8 with a per-row scale passes the per-element rule but not the normwise one."""
    x, ref = _bf16_softmax()
    e = (x - x.amax(-1, keepdim=True)).exp()
    assert _codes([e / e.sum(-1, keepdim=True)], [ref]) == []
    scale = ref.float().amax(-1, keepdim=True) / torch.finfo(torch.float8_e4m3fn).max
    fp8 = ((ref.float() / scale).to(torch.float8_e4m3fn).float() * scale).bfloat16()
    reasons, stats = compare([fp8], [ref], _problem(), device=CPU)
    assert [r.code for r in reasons] == ["MISMATCH"]
    assert "normwise" in reasons[0].detail and stats["norm_err"] > 0.012


def test_invariants_are_checked_on_the_output_itself():
    """A row scaled by 1.03 stays within bf16's per-element rtol but breaks the row sum; a
    value above 1 breaks the [0, 1] bound."""
    _, ref = _bf16_softmax(1)
    scaled = ref.clone()
    scaled[3] = (scaled[3].float() * 1.03).bfloat16()
    reasons, _ = compare([scaled], [ref], _problem(), device=CPU)
    assert "INVARIANT" in [r.code for r in reasons]
    assert "sums over dim -1" in next(r.detail for r in reasons if r.code == "INVARIANT")
    above = torch.zeros(2, 4)
    above[:, 0] = 1.0
    above[0, 0], above[0, 1] = 1.5, -0.5  # rows still sum to 1; even the reference can't save it
    reasons, _ = compare([above], [above.clone()], _problem(), device=CPU)
    assert any("outside [0, 1]" in r.detail for r in reasons)


def test_fp8_outputs_are_widened_and_packed_fp4_compared_bit_for_bit():
    import dataclasses

    from farm.suite.model import Tolerance

    tolerance = {
        "float8_e4m3fnuz": Tolerance(0.125, 0.125),
        "float4_e2m1fn_x2": Tolerance(0.0, 0.0),
    }
    problem = dataclasses.replace(_problem(), tolerance=tolerance)
    ref = torch.randn(8, 16).to(torch.float8_e4m3fnuz)
    off = ref.float()
    off[3, 4] += 4.0

    def codes(out, expected):
        return [r.code for r in compare([out], [expected], problem, device=CPU)[0]]

    assert codes(ref.clone(), ref) == []
    assert codes(off.to(torch.float8_e4m3fnuz), ref) == ["MISMATCH"]
    packed = torch.randint(1, 256, (4, 8), dtype=torch.uint8)
    flipped = packed.clone()
    flipped[1, 2] ^= 1
    fp4 = torch.float4_e2m1fn_x2
    assert codes(packed.view(fp4), packed.clone().view(fp4)) == []
    assert codes(flipped.view(fp4), packed.view(fp4)) == ["MISMATCH"]
