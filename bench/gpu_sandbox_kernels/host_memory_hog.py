# problem: softmax
# expect: MEMORY_LIMIT
"""Fills 12 GiB of host memory from a GPU sandbox (no address-space rlimit applies there)."""

import time

import torch

_held = []


def kernel(x):
    for _ in range(12):
        _held.append(bytearray(1 << 30))
    time.sleep(2)
    return torch.softmax(x, dim=-1)
