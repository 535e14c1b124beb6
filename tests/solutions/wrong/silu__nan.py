# problem: silu
# expect: INCORRECT
"""Flaw (NaN output): a log of the input leaks NaN into every negative element."""

import torch


def kernel(x):
    return x * torch.sigmoid(x) + 0.0 * torch.log(x)
