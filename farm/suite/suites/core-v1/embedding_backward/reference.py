import torch


def reference(ids, dy, grad):
    return grad.index_add(0, ids, dy.float())


def make_inputs(axes, dtype, device, generator):
    t, v, h = axes["T"], axes["V"], axes["H"]
    # Half of the tokens come from 64 frequent ids, so ids repeat as in real text.
    frequent = torch.randint(0, min(64, v), (t,), device=device, generator=generator)
    rare = torch.randint(0, v, (t,), device=device, generator=generator)
    pick = torch.rand(t, device=device, generator=generator) < 0.5
    ids = torch.where(pick, frequent, rare)
    dy = torch.randn(t, h, device=device, generator=generator).to(dtype)
    grad = torch.randn(v, h, device=device, generator=generator)
    return ids, dy, grad
