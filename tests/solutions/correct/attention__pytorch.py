# problem: attention
# expect: PASSED
"""Attention written out in fp32: scores, a row softmax, and the weighted sum of v."""

import torch


def kernel(q, k, v):
    scale = q.shape[-1] ** -0.5
    scores = (q.float() @ k.float().transpose(-1, -2)) * scale
    return (torch.softmax(scores, dim=-1) @ v.float()).to(q.dtype)
