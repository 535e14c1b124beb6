import torch
import torch.nn.functional as F


def reference(x, bias):
    return F.gelu(x.float() + bias.float()).to(x.dtype)


def make_inputs(axes, dtype, device, generator):
    m, n = axes["M"], axes["N"]
    x = 2 * torch.randn(m, n, device=device, generator=generator)
    bias = torch.randn(n, device=device, generator=generator)
    return x.to(dtype), bias.to(dtype)
