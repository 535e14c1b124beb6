import torch


def reference(a, w, scale_a, scale_b):
    out = (a.float() @ w.float().T) * (scale_a * scale_b)
    return out.to(torch.bfloat16)


def make_inputs(axes, dtype, device, generator):
    m, n, k = axes["M"], axes["N"], axes["K"]
    a = torch.randn(m, k, device=device, generator=generator).to(torch.float8_e4m3fn)
    w = torch.randn(n, k, device=device, generator=generator).to(torch.float8_e4m3fn)
    scale_a = (0.5 + torch.rand(1, device=device, generator=generator)) / k**0.5
    scale_b = 0.5 + torch.rand(1, device=device, generator=generator)
    return a, w, scale_a, scale_b
