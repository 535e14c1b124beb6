# problem: cumsum
# expect: PASSED
"""Row prefix sums: one program per row scans blocks with tl.cumsum and carries the total."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _cumsum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n_cols
    cols = tl.arange(0, BLOCK)
    carry = 0.0
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + base + start + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(out_ptr + base + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n_cols = x.shape[-1]
    block = min(BLOCK, triton.next_power_of_2(n_cols))
    _cumsum[(x.numel() // n_cols,)](x, out, n_cols, BLOCK=block)
    return out
