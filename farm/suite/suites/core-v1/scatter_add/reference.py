import torch


def reference(base, index, src):
    return base.float().index_add(0, index, src.float()).to(base.dtype)


def make_inputs(axes, dtype, device, generator):
    t, r, h = axes["T"], axes["R"], axes["H"]
    base = torch.randn(t, h, device=device, generator=generator).to(dtype)
    # Every token receives R/T rows (its top-k experts), in a shuffled (expert-sorted) order.
    index = torch.randperm(r, device=device, generator=generator) % t
    src = torch.randn(r, h, device=device, generator=generator).to(dtype)
    return base, index, src
