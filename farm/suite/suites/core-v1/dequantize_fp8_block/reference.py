import torch

BLOCK = 128


def reference(w, scale):
    n, k = w.shape
    full = scale.repeat_interleave(BLOCK, 0)[:n].repeat_interleave(BLOCK, 1)[:, :k]
    return (w.float() * full).to(torch.bfloat16)


def make_inputs(axes, dtype, device, generator):
    n, k = axes["N"], axes["K"]
    w = torch.randn(n, k, device=device, generator=generator).to(torch.float8_e4m3fn)
    blocks = (-(-n // BLOCK), -(-k // BLOCK))
    scale = (0.5 + torch.rand(blocks, device=device, generator=generator)) * 1e-2
    return w, scale
