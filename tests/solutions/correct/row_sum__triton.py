# problem: row_sum
# expect: PASSED
"""Row sums: one program per row accumulates blocks in fp32 and rounds once."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _row_sum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=0.0)
        total += x.to(tl.float32)
    tl.store(out_ptr + row, tl.sum(total, axis=0).to(out_ptr.dtype.element_ty))


def kernel(x):
    x = x.contiguous()
    rows, n_cols = x.shape
    out = torch.empty(rows, device=x.device, dtype=x.dtype)
    _row_sum[(rows,)](x, out, n_cols, BLOCK=min(BLOCK, triton.next_power_of_2(n_cols)))
    return out
