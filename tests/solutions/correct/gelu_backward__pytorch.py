# problem: gelu_backward
# expect: PASSED
"""GELU gradient through autograd of torch's exact GELU, in fp32."""

import torch
import torch.nn.functional as F


def kernel(x, dy):
    xf = x.detach().float().requires_grad_(True)
    (dx,) = torch.autograd.grad(F.gelu(xf), xf, dy.float())
    return dx.to(x.dtype)
