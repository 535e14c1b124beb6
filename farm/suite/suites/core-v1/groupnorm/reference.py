import torch
import torch.nn.functional as F


def reference(x, weight, bias):
    out = F.group_norm(x.float(), 32, weight.float(), bias.float(), 1e-5)
    return out.to(x.dtype)


def make_inputs(axes, dtype, device, generator):
    b, c, h, w = axes["B"], axes["C"], axes["H"], axes["W"]
    x = torch.randn(b, c, h, w, device=device, generator=generator)
    # A different offset per channel, so groups have different means.
    x = x + torch.randn(1, c, 1, 1, device=device, generator=generator)
    weight = 1 + 0.1 * torch.randn(c, device=device, generator=generator)
    bias = 0.1 * torch.randn(c, device=device, generator=generator)
    return x.to(dtype), weight.to(dtype), bias.to(dtype)
