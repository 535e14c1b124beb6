import torch
import torch.nn.functional as F


def reference(x):
    gate, up = x.float().chunk(2, dim=-1)
    return (F.silu(gate) * up).to(x.dtype)


def make_inputs(axes, dtype, device, generator):
    x = 2 * torch.randn(axes["M"], 2 * axes["I"], device=device, generator=generator)
    return (x.to(dtype),)
