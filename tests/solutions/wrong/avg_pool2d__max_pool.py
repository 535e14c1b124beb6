# problem: avg_pool2d
# expect: INCORRECT
"""Flaw: takes the maximum of each 2x2 window instead of its mean."""

import torch.nn.functional as F


def kernel(x):
    return F.max_pool2d(x, 2)
