# problem: swiglu
# expect: PASSED
"""silu(gate) * up over [M, 2I] -> [M, I]: a 2-D grid of (row, column block) programs."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _swiglu(x_ptr, out_ptr, inter, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < inter
    gate = tl.load(x_ptr + row * 2 * inter + cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * 2 * inter + inter + cols, mask=mask, other=0.0).to(tl.float32)
    y = gate / (1.0 + tl.exp(-gate)) * up
    tl.store(out_ptr + row * inter + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    m, inter = x.shape[0], x.shape[1] // 2
    out = torch.empty(m, inter, device=x.device, dtype=x.dtype)
    _swiglu[(m, triton.cdiv(inter, BLOCK))](x, out, inter, BLOCK=BLOCK)
    return out
