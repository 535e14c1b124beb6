# problem: rope
# expect: PASSED
"""Rotate-half RoPE: the two halves of each head rotate by the token's angles."""

import torch


def kernel(x, cos, sin):
    half = x.shape[-1] // 2
    xf = x.float()
    first, second = xf[..., :half], xf[..., half:]
    c, s = cos.unsqueeze(1), sin.unsqueeze(1)
    out = torch.empty_like(xf)
    out[..., :half] = first * c - second * s
    out[..., half:] = second * c + first * s
    return out.to(x.dtype)
