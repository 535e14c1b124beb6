# problem: rmsnorm
# expect: INCORRECT
"""Flaw (low precision): computes in float16, so fp32 outputs are only good to ~1e-3."""

import torch


def kernel(x, weight):
    xh, wh = x.half(), weight.half()
    out = xh * torch.rsqrt(xh.pow(2).mean(-1, keepdim=True) + 1e-6) * wh
    return out.to(x.dtype)
