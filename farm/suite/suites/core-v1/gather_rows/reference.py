import torch


def reference(x, index):
    return x[index]


def make_inputs(axes, dtype, device, generator):
    t, r, h = axes["T"], axes["R"], axes["H"]
    x = torch.randn(t, h, device=device, generator=generator).to(dtype)
    # Every token appears R/T times (its top-k experts), in a shuffled (expert-sorted) order.
    index = torch.randperm(r, device=device, generator=generator) % t
    return x, index
