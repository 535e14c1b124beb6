# problem: matmul
# expect: PASSED
"""Fused: 128x128 output tiles (K steps of 64) on the matrix unit, the cast to the output dtype
done in the epilogue, so C is written once."""

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
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(
        c_ptr + rm[:, None].to(tl.int64) * N + rn[None, :],
        acc.to(c_ptr.dtype.element_ty),
        mask=mask,
    )


def kernel(a, b):
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, dtype=a.dtype)
    _matmul_tile[(triton.cdiv(m, 128), triton.cdiv(n, 128))](
        a, b, c, m, n, k, BM=128, BN=128, BK=64
    )
    return c
