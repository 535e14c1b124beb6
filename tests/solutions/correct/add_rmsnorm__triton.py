# problem: add_rmsnorm
# expect: PASSED
"""Residual add + RMSNorm (eps 1e-5): one program per row. The first sweep writes h = x +
residual and sums its squares in fp32; the second recomputes h in fp32 and normalises it."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _add_rmsnorm(x_ptr, r_ptr, w_ptr, out_ptr, h_ptr, n_cols, eps, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n_cols
    cols = tl.arange(0, BLOCK)
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + base + start + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_ptr + base + start + cols, mask=mask, other=0.0).to(tl.float32)
        h = x + r
        tl.store(h_ptr + base + start + cols, h.to(h_ptr.dtype.element_ty), mask=mask)
        squares += h * h
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + base + start + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_ptr + base + start + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x + r) * rstd * w
        tl.store(out_ptr + base + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x, residual, weight):
    x, residual = x.contiguous(), residual.contiguous()
    out, h = torch.empty_like(x), torch.empty_like(x)
    n_cols = x.shape[-1]
    block = min(BLOCK, triton.next_power_of_2(n_cols))
    _add_rmsnorm[(x.numel() // n_cols,)](x, residual, weight, out, h, n_cols, 1e-5, BLOCK=block)
    return out, h
