import torch
import torch.nn.functional as F


def reference(x):
    return F.avg_pool2d(x.float(), 2).to(x.dtype)


def make_inputs(axes, dtype, device, generator):
    x = torch.randn(axes["B"], axes["C"], axes["H"], axes["W"], device=device, generator=generator)
    return (x.to(dtype),)
