# problem: depthwise_conv1d
# expect: PASSED
"""Causal depthwise convolution as R shifted multiply-adds over a left-padded input."""

import torch.nn.functional as F


def kernel(x, w):
    width = w.shape[1]
    length = x.shape[-1]
    padded = F.pad(x.float(), (width - 1, 0))
    wf = w.float()
    out = sum(wf[:, r, None] * padded[..., r : r + length] for r in range(width))
    return out.to(x.dtype)
