# problem: matmul
# expect: PASSED
"""Naive: one program per (row, 64 columns) on the vector unit; no tile of B is reused."""

import torch
import triton
import triton.language as tl


@triton.jit
def _matmul_rows(a_ptr, b_ptr, c_ptr, N, K, BN: tl.constexpr, BK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk0 = tl.arange(0, BK)
    acc = tl.zeros([BN], tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + rk0
        a = tl.load(a_ptr + row * K + rk, mask=rk < K, other=0.0).to(tl.float32)
        b = tl.load(
            b_ptr + rk[:, None] * N + rn[None, :],
            mask=(rk[:, None] < K) & (rn[None, :] < N),
            other=0.0,
        )
        acc += tl.sum(a[:, None] * b.to(tl.float32), axis=0)
    tl.store(c_ptr + row * N + rn, acc.to(c_ptr.dtype.element_ty), mask=rn < N)


def kernel(a, b):
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, dtype=a.dtype)
    _matmul_rows[(m, triton.cdiv(n, 64))](a, b, c, n, k, BN=64, BK=64)
    return c
