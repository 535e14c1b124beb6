# problem: cumsum
# expect: INCORRECT
"""Flaw (off-by-one): an exclusive scan; each output misses its own element."""

import torch


def kernel(x):
    return (torch.cumsum(x.float(), dim=-1) - x.float()).to(x.dtype)
