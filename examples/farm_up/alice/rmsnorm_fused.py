#!farm problem=rmsnorm mode=leaderboard label=fused-triton
# expect: PASSED
"""RMSNorm (eps 1e-6) in Triton: one program per row, the sum of squares in fp32, then scale by
the weight and write; the row is read twice and written once."""

import torch
import triton
import triton.language as tl


@triton.jit
def _rmsnorm(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=mask, other=0.0).to(tl.float32)
        squares += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(
            out_ptr + row * n_cols + start + cols,
            (x * rstd * w).to(out_ptr.dtype.element_ty),
            mask=mask,
        )


def kernel(x, weight):
    x = x.contiguous()
    out = torch.empty_like(x)
    n_cols = x.shape[-1]
    block = min(4096, triton.next_power_of_2(n_cols))
    _rmsnorm[(x.numel() // n_cols,)](x, weight, out, n_cols, 1e-6, BLOCK=block)
    return out
