# problem: moe_topk_softmax
# expect: PASSED
"""Top-2 routing: the renormalised top-2 probabilities equal a softmax over the top-2 logits."""

import torch


def kernel(logits):
    top, ids = torch.topk(logits.float(), 2, dim=-1)
    return torch.softmax(top, dim=-1), ids
