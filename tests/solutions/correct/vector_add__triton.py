# problem: vector_add
# expect: PASSED
"""a + b: each program adds one block of 1024 elements, in fp32, and rounds once."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (a + b).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(a, b):
    out = torch.empty_like(a)
    n = a.numel()
    _add[(triton.cdiv(n, BLOCK),)](a, b, out, n, BLOCK=BLOCK)
    return out
