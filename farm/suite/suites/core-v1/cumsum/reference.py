import torch


def reference(x):
    return torch.cumsum(x.float(), dim=-1).to(x.dtype)


def make_inputs(axes, dtype, device, generator):
    logits = 2 * torch.randn(axes["M"], axes["N"], device=device, generator=generator)
    return (torch.softmax(logits, dim=-1).to(dtype),)
