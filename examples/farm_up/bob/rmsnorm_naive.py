#!farm problem=rmsnorm mode=leaderboard label=naive-chain
# expect: PASSED
"""RMSNorm as the textbook chain of PyTorch operations, in fp32: square, mean, add eps, rsqrt,
multiply twice; each a separate pass over memory."""

import torch


def kernel(x, weight):
    xf = x.to(torch.float32)
    rstd = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
    return (xf * rstd * weight.to(torch.float32)).to(x.dtype)
