import torch
import torch.nn.functional as F


def reference(x, weight, dy):
    n = x.shape[-1]
    xf = x.detach().float().requires_grad_(True)
    wf = weight.detach().float().requires_grad_(True)
    bf = torch.zeros_like(wf, requires_grad=True)
    y = F.layer_norm(xf, (n,), wf, bf, 1e-6)
    dx, dw, db = torch.autograd.grad(y, (xf, wf, bf), dy.float())
    return dx.to(x.dtype), dw.to(weight.dtype), db.to(weight.dtype)


def make_inputs(axes, dtype, device, generator):
    m, n = axes["M"], axes["N"]
    x = 0.5 + 2 * torch.randn(m, n, device=device, generator=generator)
    weight = 1 + 0.1 * torch.randn(n, device=device, generator=generator)
    dy = torch.randn(m, n, device=device, generator=generator)
    return x.to(dtype), weight.to(dtype), dy.to(dtype)
