# problem: quantize_int8_rowwise
# expect: INCORRECT
"""Flaw: uses the common absmax / 127 scale instead of the problem's power-of-two scale."""

import torch


def kernel(x):
    xf = x.float()
    scale = xf.abs().amax(-1, keepdim=True).clamp(min=1e-8) / 127
    return torch.round(xf / scale).clamp(-127, 127).to(torch.int8), scale
