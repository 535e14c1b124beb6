# problem: layernorm
# expect: RUNTIME_ERROR
"""Flaw (raises): an indexing bug raises an exception on every call."""

import torch


def kernel(x, weight, bias):
    mean = x.float().mean(-1, keepdim=True)
    return torch.zeros_like(x)[:, : x.shape[1]] + weight[x.shape[1]] + mean
