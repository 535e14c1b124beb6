# problem: rmsnorm_backward
# expect: PASSED
"""RMSNorm gradients by formula: with r = rsqrt(mean(x^2) + eps) and g = dy * w,
dx = r * g - x * r^3 * mean(g * x) and dweight = sum over rows of dy * x * r."""

import torch


def kernel(x, weight, dy):
    xf, wf, dyf = x.float(), weight.float(), dy.float()
    r = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    g = dyf * wf
    dx = r * g - xf * r.pow(3) * (g * xf).mean(-1, keepdim=True)
    dweight = (dyf * xf * r).sum(0)
    return dx.to(x.dtype), dweight.to(weight.dtype)
