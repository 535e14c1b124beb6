import torch
import torch.nn.functional as F


def reference(logits, target, dloss):
    probs = torch.softmax(logits.float(), dim=-1)
    one_hot = F.one_hot(target, logits.shape[-1]).float()
    return (dloss[:, None] * (probs - one_hot)).to(logits.dtype)


def make_inputs(axes, dtype, device, generator):
    t, v = axes["T"], axes["V"]
    logits = 2 * torch.randn(t, v, device=device, generator=generator)
    target = torch.randint(0, v, (t,), device=device, generator=generator)
    dloss = torch.rand(t, device=device, generator=generator) + 0.5
    return logits.to(dtype), target, dloss
