import torch


def reference(x, dout):
    gate, up = x.float().chunk(2, dim=-1)
    d = dout.float()
    sig = torch.sigmoid(gate)
    dgate = d * up * sig * (1 + gate * (1 - sig))
    dup = d * gate * sig
    return torch.cat([dgate, dup], dim=-1).to(x.dtype)


def make_inputs(axes, dtype, device, generator):
    m, i = axes["M"], axes["I"]
    x = 2 * torch.randn(m, 2 * i, device=device, generator=generator)
    dout = torch.randn(m, i, device=device, generator=generator)
    return x.to(dtype), dout.to(dtype)
