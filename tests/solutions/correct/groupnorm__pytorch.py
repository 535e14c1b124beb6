# problem: groupnorm
# expect: PASSED
"""GroupNorm(32) written out: per-group mean and variance in fp32, then the affine map."""

import torch

GROUPS = 32


def kernel(x, weight, bias):
    b, c = x.shape[:2]
    grouped = x.float().reshape(b, GROUPS, -1)
    mean = grouped.mean(-1, keepdim=True)
    var = (grouped - mean).pow(2).mean(-1, keepdim=True)
    normed = ((grouped - mean) * torch.rsqrt(var + 1e-5)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.dim() - 2)
    out = normed * weight.float().reshape(shape) + bias.float().reshape(shape)
    return out.to(x.dtype)
