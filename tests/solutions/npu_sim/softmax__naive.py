# problem: softmax
# expect: PASSED
"""Naive: one program per (row, 128-column block) recomputes its row's max and sum."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_block(x_ptr, o_ptr, n_cols, BLOCK: tl.constexpr):
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
    total = tl.sum(acc, axis=0)
    offs = tl.program_id(1) * BLOCK + offs0
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
    y = tl.exp(x - mx) / total
    tl.store(o_ptr + row * n_cols + offs, y.to(o_ptr.dtype.element_ty), mask=offs < n_cols)


def kernel(x):
    out = torch.empty_like(x)
    m, n = x.shape
    _softmax_block[(m, triton.cdiv(n, 128))](x, out, n, BLOCK=128)
    return out
