#!farm problem=softmax mode=leaderboard label=torch-softmax
# expect: PASSED
"""Row softmax with PyTorch's own kernel, computed in fp32 and rounded once to the input dtype."""

import torch


def kernel(x):
    return torch.softmax(x.float(), dim=-1).to(x.dtype)
