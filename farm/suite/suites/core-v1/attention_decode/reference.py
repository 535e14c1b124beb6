import torch


def reference(q, k, v):
    b, hq, d = q.shape
    hkv = k.shape[1]
    qg = q.float().view(b, hkv, hq // hkv, d)
    scores = (qg @ k.float().transpose(-1, -2)) * d**-0.5
    out = torch.softmax(scores, dim=-1) @ v.float()
    return out.reshape(b, hq, d).to(q.dtype)


def make_inputs(axes, dtype, device, generator):
    b, hq, hkv, length, d = axes["B"], axes["HQ"], axes["HKV"], axes["L"], axes["D"]
    q = torch.randn(b, hq, d, device=device, generator=generator)
    k = torch.randn(b, hkv, length, d, device=device, generator=generator)
    v = torch.randn(b, hkv, length, d, device=device, generator=generator)
    return q.to(dtype), k.to(dtype), v.to(dtype)
