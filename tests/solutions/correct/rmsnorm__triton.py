# problem: rmsnorm
# expect: PASSED
"""RMSNorm (eps 1e-6): one program per row; sum of squares in fp32, then scale and write."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _rmsnorm(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=0.0)
        x = x.to(tl.float32)
        squares += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        y = x * rstd * w
        tl.store(out_ptr + row * n_cols + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x, weight):
    x = x.contiguous()
    out = torch.empty_like(x)
    n_cols = x.shape[-1]
    block = min(BLOCK, triton.next_power_of_2(n_cols))
    _rmsnorm[(x.numel() // n_cols,)](x, weight, out, n_cols, 1e-6, BLOCK=block)
    return out
