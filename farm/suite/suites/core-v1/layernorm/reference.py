import torch
import torch.nn.functional as F


def reference(x, weight, bias):
    n = x.shape[-1]
    out = F.layer_norm(x.float(), (n,), weight.float(), bias.float(), 1e-6)
    return out.to(x.dtype)


def make_inputs(axes, dtype, device, generator):
    m, n = axes["M"], axes["N"]
    x = 0.5 + 2 * torch.randn(m, n, device=device, generator=generator)
    weight = 1 + 0.1 * torch.randn(n, device=device, generator=generator)
    bias = 0.1 * torch.randn(n, device=device, generator=generator)
    return x.to(dtype), weight.to(dtype), bias.to(dtype)
