import torch


def reference(x):
    return x.float().mean(1).to(x.dtype)


def make_inputs(axes, dtype, device, generator):
    x = torch.randn(axes["B"], axes["S"], axes["H"], device=device, generator=generator)
    return (x.to(dtype),)
