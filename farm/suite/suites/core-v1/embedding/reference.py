import torch


def reference(ids, table):
    return table[ids]


def make_inputs(axes, dtype, device, generator):
    t, v, h = axes["T"], axes["V"], axes["H"]
    ids = torch.randint(0, v, (t,), device=device, generator=generator)
    table = torch.randn(v, h, device=device, generator=generator).to(dtype)
    return ids, table
