import torch
import torch.nn.functional as F


def reference(logits, target):
    return F.cross_entropy(logits.float(), target, reduction="none")


def make_inputs(axes, dtype, device, generator):
    t, v = axes["T"], axes["V"]
    logits = 2 * torch.randn(t, v, device=device, generator=generator)
    target = torch.randint(0, v, (t,), device=device, generator=generator)
    return logits.to(dtype), target
