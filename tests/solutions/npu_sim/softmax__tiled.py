# problem: softmax
# expect: PASSED
"""Tiled: a statistics launch (row max and sum, one program per row) writes them to HBM; a
second launch, one program per row, normalises the row in tiles of 1024 columns, reading x
again from HBM."""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_stats(x_ptr, m_ptr, s_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs0 = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for s in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + s + offs0, mask=s + offs0 < n_cols, other=float("-inf"))
        m = tl.maximum(m, x.to(tl.float32))
    mx = tl.max(m, axis=0)
    acc = tl.zeros([BLOCK], tl.float32)
    for s in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + s + offs0, mask=s + offs0 < n_cols, other=float("-inf"))
        acc += tl.exp(x.to(tl.float32) - mx)
    tl.store(m_ptr + row, mx)
    tl.store(s_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def _normalise(x_ptr, m_ptr, s_ptr, o_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    mx = tl.load(m_ptr + row)
    total = tl.load(s_ptr + row)
    for s in range(0, n_cols, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
        y = tl.exp(x - mx) / total
        tl.store(o_ptr + row * n_cols + offs, y.to(o_ptr.dtype.element_ty), mask=offs < n_cols)


def kernel(x):
    m, n = x.shape
    out = torch.empty_like(x)
    row_max = torch.empty(m, dtype=torch.float32)
    row_sum = torch.empty(m, dtype=torch.float32)
    _row_stats[(m,)](x, row_max, row_sum, n, BLOCK=1024)
    _normalise[(m,)](x, row_max, row_sum, out, n, BLOCK=1024)
    return out
