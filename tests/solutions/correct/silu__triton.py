# problem: silu
# expect: PASSED
"""SiLU, x / (1 + exp(-x)), in fp32 per element."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _silu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (x / (1.0 + tl.exp(-x))).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    _silu[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), BLOCK=BLOCK)
    return out
