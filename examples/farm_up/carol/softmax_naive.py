#!farm problem=softmax mode=leaderboard label=naive-chain
# expect: PASSED
"""Row softmax written out as a chain of PyTorch operations: correct, but every step is a
separate pass over memory (convert, max, subtract, exp, sum, divide, convert back)."""

import torch


def kernel(x):
    xf = x.to(torch.float32)
    shifted = xf - xf.max(dim=-1, keepdim=True).values
    e = torch.exp(shifted)
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)
