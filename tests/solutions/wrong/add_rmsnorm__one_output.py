# problem: add_rmsnorm
# expect: INCORRECT
"""Flaw: returns only the normalised output, not the updated residual."""

import torch


def kernel(x, residual, weight):
    h = x.float() + residual.float()
    out = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-5) * weight.float()
    return out.to(x.dtype)
