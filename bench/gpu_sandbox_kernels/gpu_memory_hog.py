# problem: softmax
# expect: MEMORY_LIMIT
"""Asks for 12 GiB of device memory on a 64x256 softmax."""

import torch

_held = []


def kernel(x):
    _held.append(torch.empty(12 << 30, dtype=torch.uint8, device=x.device))
    return torch.softmax(x, dim=-1)
