import torch


def reference(x, weight, dy):
    xf = x.detach().float().requires_grad_(True)
    wf = weight.detach().float().requires_grad_(True)
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * wf
    dx, dw = torch.autograd.grad(y, (xf, wf), dy.float())
    return dx.to(x.dtype), dw.to(weight.dtype)


def make_inputs(axes, dtype, device, generator):
    m, n = axes["M"], axes["N"]
    x = torch.randn(m, n, device=device, generator=generator)
    weight = 1 + 0.1 * torch.randn(n, device=device, generator=generator)
    dy = torch.randn(m, n, device=device, generator=generator)
    return x.to(dtype), weight.to(dtype), dy.to(dtype)
