# problem: bias_gelu
# expect: PASSED
"""Bias add and exact GELU in fp32, rounded once."""

import torch.nn.functional as F


def kernel(x, bias):
    return F.gelu(x.float() + bias.float()).to(x.dtype)
