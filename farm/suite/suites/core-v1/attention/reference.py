import torch
import torch.nn.functional as F


def reference(q, k, v):
    out = F.scaled_dot_product_attention(q.float(), k.float(), v.float())
    return out.to(q.dtype)


def make_inputs(axes, dtype, device, generator):
    b, h, sq, sk, d = axes["B"], axes["H"], axes["SQ"], axes["SK"], axes["D"]
    q = torch.randn(b, h, sq, d, device=device, generator=generator)
    k = torch.randn(b, h, sk, d, device=device, generator=generator)
    v = torch.randn(b, h, sk, d, device=device, generator=generator)
    return q.to(dtype), k.to(dtype), v.to(dtype)
