import torch


def reference(a, b):
    return a + b


def make_inputs(axes, dtype, device, generator):
    n = axes["N"]
    a = torch.randn(n, device=device, generator=generator).to(dtype)
    b = torch.randn(n, device=device, generator=generator).to(dtype)
    return a, b
