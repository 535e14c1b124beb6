# problem: gather_rows
# expect: PASSED
"""MoE dispatch gather: program (output row, column block) copies one slice of x[index[row]]."""

import torch
import triton
import triton.language as tl

BLOCK = 512


@triton.jit
def _gather(x_ptr, index_ptr, out_ptr, hidden, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < hidden
    src = tl.load(index_ptr + row)
    values = tl.load(x_ptr + src * hidden + cols, mask=mask)
    tl.store(out_ptr + row * hidden + cols, values, mask=mask)


def kernel(x, index):
    x = x.contiguous()
    hidden = x.shape[1]
    out = torch.empty(index.shape[0], hidden, device=x.device, dtype=x.dtype)
    _gather[(index.shape[0], triton.cdiv(hidden, BLOCK))](x, index, out, hidden, BLOCK=BLOCK)
    return out
