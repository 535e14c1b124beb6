import torch


def reference(a, w):
    return a @ w.T


def make_inputs(axes, dtype, device, generator):
    m, n, k = axes["M"], axes["N"], axes["K"]
    a = torch.randn(m, k, device=device, generator=generator)
    w = torch.randn(n, k, device=device, generator=generator) / k**0.5
    return a.to(dtype), w.to(dtype)
