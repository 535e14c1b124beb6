# problem: attention_causal
# expect: INCORRECT
"""Flaw: ignores the causal mask, so queries see future keys."""

import torch.nn.functional as F


def kernel(q, k, v):
    return F.scaled_dot_product_attention(q.float(), k.float(), v.float()).to(q.dtype)
