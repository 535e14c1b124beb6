# problem: rmsnorm
# expect: PASSED
"""Fused: one program per row holds the whole row on chip; one read, one write."""

import torch
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_row(x_ptr, w_ptr, o_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(
        o_ptr + row * n_cols + offs, (x * rstd * w).to(o_ptr.dtype.element_ty), mask=offs < n_cols
    )


def kernel(x, weight):
    out = torch.empty_like(x)
    m, n = x.shape
    _rmsnorm_row[(m,)](x, weight, out, n, 1e-6, BLOCK=triton.next_power_of_2(n))
    return out
