import torch


def reference(a, b):
    return torch.bmm(a, b)


def make_inputs(axes, dtype, device, generator):
    bs, m, n, k = axes["B"], axes["M"], axes["N"], axes["K"]
    a = torch.randn(bs, m, k, device=device, generator=generator)
    b = torch.randn(bs, k, n, device=device, generator=generator) / k**0.5
    return a.to(dtype), b.to(dtype)
