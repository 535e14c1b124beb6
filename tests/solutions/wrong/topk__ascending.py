# problem: topk
# expect: INCORRECT
"""Flaw: the right 50 elements, but in ascending instead of descending order."""

import torch


def kernel(x):
    values, indices = torch.topk(x, 50, dim=-1)
    return values.flip(-1), indices.flip(-1)
