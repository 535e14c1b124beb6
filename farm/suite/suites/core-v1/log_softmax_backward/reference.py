import torch


def reference(out, dy):
    dyf = dy.float()
    return (dyf - torch.exp(out.float()) * dyf.sum(-1, keepdim=True)).to(out.dtype)


def make_inputs(axes, dtype, device, generator):
    m, n = axes["M"], axes["N"]
    logits = 2 * torch.randn(m, n, device=device, generator=generator)
    out = torch.log_softmax(logits, dim=-1)
    dy = torch.randn(m, n, device=device, generator=generator)
    return out.to(dtype), dy.to(dtype)
