import torch


def reference(a, b):
    return a @ b


def make_inputs(axes, dtype, device, generator):
    m, n, k = axes["M"], axes["N"], axes["K"]
    a = torch.randn(m, k, device=device, generator=generator)
    b = torch.randn(k, n, device=device, generator=generator) / k**0.5
    return a.to(dtype), b.to(dtype)
