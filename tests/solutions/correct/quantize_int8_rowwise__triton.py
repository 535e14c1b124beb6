# problem: quantize_int8_rowwise
# expect: PASSED
"""Per-row INT8 with a power-of-two scale: one program per row. The scale's exponent is read
from the bits of the row absmax, so x / scale is exact; rounding is half-to-even."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _round_half_even(v):
    down = tl.floor(v)
    frac = v - down
    down_is_even = (down - 2.0 * tl.floor(down * 0.5)) == 0.0
    up = tl.where(frac > 0.5, down + 1.0, down)
    return tl.where((frac == 0.5) & ~down_is_even, down + 1.0, up)


@triton.jit
def _quantize(x_ptr, q_ptr, scale_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    amax = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=0.0)
        amax = tl.maximum(amax, tl.abs(x.to(tl.float32)))
    row_amax = tl.maximum(tl.max(amax, axis=0), 2.0**-100)
    exponent = (row_amax.to(tl.int32, bitcast=True) >> 23) & 0xFF
    scale = ((exponent - 6) << 23).to(tl.float32, bitcast=True)
    inv_scale = ((254 - (exponent - 6)) << 23).to(tl.float32, bitcast=True)  # exactly 1 / scale
    tl.store(scale_ptr + row, scale)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=mask, other=0.0).to(tl.float32)
        q = tl.minimum(tl.maximum(_round_half_even(x * inv_scale), -127.0), 127.0)
        tl.store(q_ptr + row * n_cols + start + cols, q.to(tl.int8), mask=mask)


def kernel(x):
    x = x.contiguous()
    rows, n_cols = x.shape
    q = torch.empty(rows, n_cols, device=x.device, dtype=torch.int8)
    scale = torch.empty(rows, 1, device=x.device, dtype=torch.float32)
    _quantize[(rows,)](x, q, scale, n_cols, BLOCK=min(BLOCK, triton.next_power_of_2(n_cols)))
    return q, scale
