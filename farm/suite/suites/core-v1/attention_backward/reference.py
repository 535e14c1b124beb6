import torch


def reference(q, k, v, dout):
    qf, kf, vf, dof = (t.float() for t in (q, k, v, dout))
    scale = q.shape[-1] ** -0.5
    p = torch.softmax((qf @ kf.transpose(-1, -2)) * scale, dim=-1)
    dv = p.transpose(-1, -2) @ dof
    dp = dof @ vf.transpose(-1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    dq = (ds @ kf) * scale
    dk = (ds.transpose(-1, -2) @ qf) * scale
    return dq.to(q.dtype), dk.to(q.dtype), dv.to(q.dtype)


def make_inputs(axes, dtype, device, generator):
    shape = (axes["B"], axes["H"], axes["S"], axes["D"])
    tensors = [torch.randn(shape, device=device, generator=generator) for _ in range(4)]
    return tuple(t.to(dtype) for t in tensors)
