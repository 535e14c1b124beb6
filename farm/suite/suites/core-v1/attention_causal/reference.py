import torch
import torch.nn.functional as F


def reference(q, k, v):
    out = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    return out.to(q.dtype)


def make_inputs(axes, dtype, device, generator):
    b, h, s, d, dv = axes["B"], axes["H"], axes["S"], axes["D"], axes["DV"]
    q = torch.randn(b, h, s, d, device=device, generator=generator)
    k = torch.randn(b, h, s, d, device=device, generator=generator)
    v = torch.randn(b, h, s, dv, device=device, generator=generator)
    return q.to(dtype), k.to(dtype), v.to(dtype)
