# problem: softmax
# expect: INCORRECT
"""Flaw (wrong dtype): always returns float32, also for bfloat16 inputs."""

import torch


def kernel(x):
    return torch.softmax(x.float(), dim=-1)
