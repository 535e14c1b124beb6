# problem: rope
# expect: INCORRECT
"""Flaw: rotates interleaved pairs (x[2i], x[2i+1]), the GPT-J layout, not rotate-half."""

import torch


def kernel(x, cos, sin):
    xf = x.float()
    even, odd = xf[..., 0::2], xf[..., 1::2]
    c, s = cos.unsqueeze(1), sin.unsqueeze(1)
    out = torch.stack([even * c - odd * s, odd * c + even * s], dim=-1).flatten(-2)
    return out.to(x.dtype)
