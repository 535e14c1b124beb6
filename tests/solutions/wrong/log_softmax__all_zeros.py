# problem: log_softmax
# expect: INCORRECT
"""Flaw (all zeros): returns a zero tensor of the right shape and dtype."""

import torch


def kernel(x):
    return torch.zeros_like(x)
