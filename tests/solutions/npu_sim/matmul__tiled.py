# problem: matmul
# expect: PASSED
"""Tiled: 32x32 output tiles on the matrix unit, accumulated into an fp32 buffer that a
separate cast then converts to the output dtype."""

import torch
import triton
import triton.language as tl


@triton.jit
def _matmul_tile(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk0 = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + rk0
        a = tl.load(
            a_ptr + rm[:, None].to(tl.int64) * K + rk[None, :],
            mask=(rm[:, None] < M) & (rk[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + rk[:, None].to(tl.int64) * N + rn[None, :],
            mask=(rk[:, None] < K) & (rn[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(a, b)
    tl.store(
        c_ptr + rm[:, None].to(tl.int64) * N + rn[None, :],
        acc,
        mask=(rm[:, None] < M) & (rn[None, :] < N),
    )


def kernel(a, b):
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, dtype=torch.float32)
    _matmul_tile[(triton.cdiv(m, 32), triton.cdiv(n, 32))](a, b, c, m, n, k, BM=32, BN=32, BK=32)
    return c.to(a.dtype)
