"""bf16 kernels run correctly under the interpreter and are costed at bf16 sizes and rates."""

from __future__ import annotations

import torch

from farm.hardware import npu_sim
from tests.hardware.npu_sim import kernels as k


def _bf16(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).bfloat16()


def test_bf16_add_matches_torch_and_costs_two_bytes_per_element():
    x, y = _bf16(3000), _bf16(3000, seed=1)
    rep = npu_sim.measure(lambda a, b: k.triton_add(a, b, block=1024), (x, y))
    assert rep.output.dtype == torch.bfloat16
    torch.testing.assert_close(rep.output, x + y)
    assert rep.hbm_bytes == {"read": 2 * 3000 * 2, "written": 3000 * 2}


def test_bf16_arithmetic_without_upcast_is_correct():
    x, y = _bf16(1000), _bf16(1000, seed=1)
    rep = npu_sim.measure(k.bf16_direct, (x, y))
    expected = (x.float() * 2.0 + y.float() - 1.0).bfloat16()
    torch.testing.assert_close(rep.output, expected, atol=1e-2, rtol=1e-2)


def test_bf16_softmax_with_reductions():
    x = _bf16(16, 256)
    rep = npu_sim.measure(k.triton_softmax, (x,))
    torch.testing.assert_close(
        rep.output.float(), torch.softmax(x.float(), -1), atol=1e-2, rtol=1e-2
    )


def test_bf16_dot_runs_at_the_bf16_matrix_rate():
    a, b = _bf16(64, 64), _bf16(64, 64, seed=1)
    a32, b32 = a.float(), b.float() + 1e-3  # float32 values that are not bf16 values
    bf = npu_sim.measure(lambda x, y: k.matmul_tiled(x, y, 32, 32, 32), (a, b))
    fp = npu_sim.measure(lambda x, y: k.matmul_tiled(x, y, 32, 32, 32), (a32, b32))
    torch.testing.assert_close(bf.output.float(), a.float() @ b.float(), atol=0.1, rtol=0.02)
    assert bf.flops["tensor"] == fp.flops["tensor"] == 2 * 64**3
    # Same FLOPs; bf16 moves half the bytes and its matrix rate is 4x fp32's.
    assert bf.hbm_bytes["read"] * 2 == fp.hbm_bytes["read"]
    assert bf.sol_ms < fp.sol_ms
