# problem: avg_pool2d
# expect: PASSED
"""2x2 / stride 2 average pooling: each program averages one block of output pixels."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _avg_pool(x_ptr, out_ptr, n_out, height, width, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_out
    out_w = width // 2
    out_h = height // 2
    plane = offs // (out_h * out_w)
    oy = (offs // out_w) % out_h
    ox = offs % out_w
    top_left = plane * height * width + (2 * oy) * width + 2 * ox
    total = tl.load(x_ptr + top_left, mask=mask, other=0.0).to(tl.float32)
    total += tl.load(x_ptr + top_left + 1, mask=mask, other=0.0).to(tl.float32)
    total += tl.load(x_ptr + top_left + width, mask=mask, other=0.0).to(tl.float32)
    total += tl.load(x_ptr + top_left + width + 1, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (total * 0.25).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    b, c, h, w = x.shape
    out = torch.empty(b, c, h // 2, w // 2, device=x.device, dtype=x.dtype)
    n_out = out.numel()
    _avg_pool[(triton.cdiv(n_out, BLOCK),)](x, out, n_out, h, w, BLOCK=BLOCK)
    return out
