import torch


def reference(x, weight):
    xf = x.float()
    out = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()
    return out.to(x.dtype)


def make_inputs(axes, dtype, device, generator):
    m, n = axes["M"], axes["N"]
    x = torch.randn(m, n, device=device, generator=generator)
    weight = 1 + 0.1 * torch.randn(n, device=device, generator=generator)
    return x.to(dtype), weight.to(dtype)
