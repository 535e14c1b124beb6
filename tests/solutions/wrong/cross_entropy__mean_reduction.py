# problem: cross_entropy
# expect: INCORRECT
"""Flaw (wrong shape): returns the mean loss (a scalar) instead of one loss per token."""

import torch.nn.functional as F


def kernel(logits, target):
    return F.cross_entropy(logits.float(), target)
