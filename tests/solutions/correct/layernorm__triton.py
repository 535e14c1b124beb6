# problem: layernorm
# expect: PASSED
"""LayerNorm (eps 1e-6): one program per row; two-pass mean and variance in fp32."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _layernorm(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        total += tl.load(x_row + start + cols, mask=start + cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / n_cols
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        centred = tl.where(mask, x - mean, 0.0)
        squares += centred * centred
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(out_ptr + row * n_cols + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x, weight, bias):
    x = x.contiguous()
    out = torch.empty_like(x)
    n_cols = x.shape[-1]
    block = min(BLOCK, triton.next_power_of_2(n_cols))
    _layernorm[(x.numel() // n_cols,)](x, weight, bias, out, n_cols, 1e-6, BLOCK=block)
    return out
