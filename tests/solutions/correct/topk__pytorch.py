# problem: topk
# expect: PASSED
"""Top-50 by a full descending sort of each row (slower than torch.topk, but exact)."""

import torch


def kernel(x):
    values, indices = torch.sort(x, dim=-1, descending=True)
    return values[:, :50].contiguous(), indices[:, :50].contiguous()
