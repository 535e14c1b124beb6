# problem: softmax
# expect: PASSED
"""Fused: one program per row holds the whole row on chip; one read, one write."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_row(x_ptr, o_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=float("-inf"))
    x = x.to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(o_ptr + row * n_cols + offs, y.to(o_ptr.dtype.element_ty), mask=offs < n_cols)


def kernel(x):
    out = torch.empty_like(x)
    m, n = x.shape
    _softmax_row[(m,)](x, out, n, BLOCK=triton.next_power_of_2(n))
    return out
