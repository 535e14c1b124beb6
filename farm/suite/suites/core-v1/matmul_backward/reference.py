import torch


def reference(a, b, dout):
    return dout @ b.T, a.T @ dout


def make_inputs(axes, dtype, device, generator):
    # Scales chosen so da = dout @ b.T and db = a.T @ dout both have unit variance.
    m, n, k = axes["M"], axes["N"], axes["K"]
    a = torch.randn(m, k, device=device, generator=generator)
    b = torch.randn(k, n, device=device, generator=generator) * (m / n) ** 0.5
    dout = torch.randn(m, n, device=device, generator=generator) / m**0.5
    return a.to(dtype), b.to(dtype), dout.to(dtype)
