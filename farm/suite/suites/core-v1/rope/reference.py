import torch

THETA = 500000.0


def reference(x, cos, sin):
    x1, x2 = x.float().chunk(2, dim=-1)
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def make_inputs(axes, dtype, device, generator):
    t, nh, d = axes["T"], axes["NH"], axes["D"]
    x = torch.randn(t, nh, d, device=device, generator=generator).to(dtype)
    start = torch.randint(0, 8192, (1,), device=device, generator=generator)
    positions = (start + torch.arange(t, device=device)).double()
    inv_freq = THETA ** (-torch.arange(0, d, 2, device=device, dtype=torch.float64) / d)
    angles = positions[:, None] * inv_freq[None, :]
    return x, torch.cos(angles).float(), torch.sin(angles).float()
