# problem: rmsnorm
# expect: PASSED
"""Naive: one program per (row, 128-column block) recomputes its row's mean square."""

import torch
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_block(x_ptr, w_ptr, o_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs0 = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for s in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + s + offs0, mask=s + offs0 < n_cols, other=0.0)
        x = x.to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    offs = tl.program_id(1) * BLOCK + offs0
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
    tl.store(
        o_ptr + row * n_cols + offs, (x * rstd * w).to(o_ptr.dtype.element_ty), mask=offs < n_cols
    )


def kernel(x, weight):
    out = torch.empty_like(x)
    m, n = x.shape
    _rmsnorm_block[(m, triton.cdiv(n, 128))](x, weight, out, n, 1e-6, BLOCK=128)
    return out
