# problem: groupnorm
# expect: INCORRECT
"""Flaw (wrong shape): returns the correct values flattened to [B, C, H*W]."""

import torch.nn.functional as F


def kernel(x, weight, bias):
    out = F.group_norm(x.float(), 32, weight.float(), bias.float(), 1e-5).to(x.dtype)
    return out.flatten(2)
