# problem: swiglu
# expect: INCORRECT
"""Flaw: applies SiLU to the up half instead of the gate half."""

import torch.nn.functional as F


def kernel(x):
    gate, up = x.float().chunk(2, dim=-1)
    return (F.silu(up) * gate).to(x.dtype)
