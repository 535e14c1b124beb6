# problem: cross_entropy_backward
# expect: PASSED
"""dlogits = dloss * (softmax(logits) - one_hot(target)), with the one-hot as a scatter."""

import torch


def kernel(logits, target, dloss):
    grad = torch.softmax(logits.float(), dim=-1)
    grad.scatter_add_(1, target[:, None], -torch.ones_like(target, dtype=grad.dtype)[:, None])
    return (grad * dloss[:, None]).to(logits.dtype)
