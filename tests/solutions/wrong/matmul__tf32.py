# problem: matmul
# expect: INCORRECT
"""Flaw (low precision): rounds fp32 operands to TF32 (10-bit mantissa) before multiplying, as
tensor cores do with TF32 enabled; errors reach ~1e-3, outside the fp32 tolerance."""

import torch


def _tf32(t):
    if t.dtype != torch.float32:
        return t.float()
    bits = t.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def kernel(a, b):
    return (_tf32(a) @ _tf32(b)).to(a.dtype)
