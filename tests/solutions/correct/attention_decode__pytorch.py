# problem: attention_decode
# expect: PASSED
"""GQA decode: each kv head serves its group of query heads without copying the cache."""

import torch


def kernel(q, k, v):
    b, hq, d = q.shape
    hkv = k.shape[1]
    queries = q.float().reshape(b, hkv, hq // hkv, d)
    scores = torch.einsum("bhgd,bhld->bhgl", queries, k.float()) * d**-0.5
    out = torch.einsum("bhgl,bhld->bhgd", torch.softmax(scores, dim=-1), v.float())
    return out.reshape(b, hq, d).to(q.dtype)
