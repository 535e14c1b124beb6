# problem: attention_backward
# expect: PASSED
"""Attention gradients through autograd of attention written out in fp32."""

import torch


def kernel(q, k, v, dout):
    qf, kf, vf = (t.detach().float().requires_grad_(True) for t in (q, k, v))
    scores = (qf @ kf.transpose(-1, -2)) * q.shape[-1] ** -0.5
    out = torch.softmax(scores, dim=-1) @ vf
    grads = torch.autograd.grad(out, (qf, kf, vf), dout.float())
    return tuple(g.to(q.dtype) for g in grads)
