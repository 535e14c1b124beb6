# problem: rmsnorm
# expect: PASSED
"""RMSNorm, one program per row, with its block size and epsilon as module-level `tl.constexpr`
globals that the kernel reads by name (Triton folds them into the compiled kernel). Honest
Triton style; a trusted replay that recompiles the kernel from its source must resolve them."""

import torch
import triton
import triton.language as tl

BLOCK = tl.constexpr(1024)
EPS = tl.constexpr(1e-6)


@triton.jit
def _rmsnorm(x_ptr, w_ptr, out_ptr, n_cols):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=mask, other=0.0).to(tl.float32)
        squares += x * x
    inv = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / n_cols + EPS)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(
            out_ptr + row * n_cols + start + cols,
            (x * inv * w).to(out_ptr.dtype.element_ty),
            mask=mask,
        )


def kernel(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_cols = x.shape[-1]
    _rmsnorm[(x.numel() // n_cols,)](x, weight.contiguous(), out, n_cols)
    return out
