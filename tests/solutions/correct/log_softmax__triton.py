# problem: log_softmax
# expect: PASSED
"""Row log-softmax: one program per row; max, then log of the sum of exp, then write."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _log_softmax(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    out_row = out_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    row_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        row_max = tl.maximum(row_max, x.to(tl.float32))
    m = tl.max(row_max, axis=0)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        total += tl.exp(x.to(tl.float32) - m)
    log_total = tl.log(tl.sum(total, axis=0))
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        y = x - m - log_total
        tl.store(out_row + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n_cols = x.shape[-1]
    block = min(BLOCK, triton.next_power_of_2(n_cols))
    _log_softmax[(x.numel() // n_cols,)](x, out, n_cols, BLOCK=block)
    return out
