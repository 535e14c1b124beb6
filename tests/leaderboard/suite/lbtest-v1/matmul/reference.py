import torch


def reference(a, b):
    return a @ b


def make_inputs(axes, dtype, device, generator):
    a = torch.randn(axes["M"], axes["K"], device=device, generator=generator).to(dtype)
    b = torch.randn(axes["K"], axes["N"], device=device, generator=generator).to(dtype)
    return a, b
