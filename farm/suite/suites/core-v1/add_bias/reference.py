import torch


def reference(x, bias):
    return x + bias


def make_inputs(axes, dtype, device, generator):
    m, n = axes["M"], axes["N"]
    x = torch.randn(m, n, device=device, generator=generator).to(dtype)
    bias = torch.randn(n, device=device, generator=generator).to(dtype)
    return x, bias
