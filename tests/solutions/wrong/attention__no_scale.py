# problem: attention
# expect: INCORRECT
"""Flaw (drops a term): forgets the 1/sqrt(D) scale of the scores."""

import torch


def kernel(q, k, v):
    scores = q.float() @ k.float().transpose(-1, -2)
    return (torch.softmax(scores, dim=-1) @ v.float()).to(q.dtype)
