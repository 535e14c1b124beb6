import torch
import torch.nn.functional as F


def reference(q, k, v):
    group = q.shape[1] // k.shape[1]
    # Expanding kv heads (rather than enable_gqa) keeps the fp32 path on a fused kernel on GPUs.
    k = k.float().repeat_interleave(group, dim=1)
    v = v.float().repeat_interleave(group, dim=1)
    out = F.scaled_dot_product_attention(q.float(), k, v, is_causal=True)
    return out.to(q.dtype)


def make_inputs(axes, dtype, device, generator):
    b, hq, hkv, s, d = axes["B"], axes["HQ"], axes["HKV"], axes["S"], axes["D"]
    q = torch.randn(b, hq, s, d, device=device, generator=generator)
    k = torch.randn(b, hkv, s, d, device=device, generator=generator)
    v = torch.randn(b, hkv, s, d, device=device, generator=generator)
    return q.to(dtype), k.to(dtype), v.to(dtype)
