# problem: rmsnorm
# expect: PASSED
"""Tiled: one launch writes each row's 1/rms to HBM; a second, one program per row, scales the
row in tiles of 1024 columns, reading x again from HBM."""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_rstd(x_ptr, r_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs0 = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for s in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + s + offs0, mask=s + offs0 < n_cols, other=0.0)
        x = x.to(tl.float32)
        acc += x * x
    tl.store(r_ptr + row, 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps))


@triton.jit
def _scale(x_ptr, w_ptr, r_ptr, o_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    rstd = tl.load(r_ptr + row)
    for s in range(0, n_cols, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
        y = (x * rstd * w).to(o_ptr.dtype.element_ty)
        tl.store(o_ptr + row * n_cols + offs, y, mask=offs < n_cols)


def kernel(x, weight):
    m, n = x.shape
    out = torch.empty_like(x)
    rstd = torch.empty(m, dtype=torch.float32)
    _row_rstd[(m,)](x, rstd, n, 1e-6, BLOCK=1024)
    _scale[(m,)](x, weight, rstd, out, n, BLOCK=1024)
    return out
