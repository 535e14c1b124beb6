# problem: softmax
# expect: MEMORY_LIMIT
"""Lifts the worker's allocator cap first, then holds 12 GiB of device memory: only the trusted
side's watch (NVML, from outside the sandbox) can stop it."""

import time

import torch
from torch.cuda import memory as allocator

_held = []


def kernel(x):
    allocator.set_per_process_memory_fraction(1.0, x.device)
    _held.append(torch.ones(12 << 30, dtype=torch.uint8, device=x.device))
    time.sleep(2)
    return torch.softmax(x, dim=-1)
