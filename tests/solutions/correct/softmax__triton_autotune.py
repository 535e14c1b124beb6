# problem: softmax
# expect: PASSED
# device: cuda
"""Row softmax in one Triton kernel whose block size and warp count are chosen by
`triton.autotune` on the GPU (the autotuner times each config on the first call of a shape, then
reuses the winner). The autotuner needs a GPU to time configs: on the CPU interpreter and
npu-sim the same kernel runs with one fixed config, so the file passes there too."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    row_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(
            x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=float("-inf")
        )
        row_max = tl.maximum(row_max, x.to(tl.float32))
    m = tl.max(row_max, axis=0)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(
            x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=float("-inf")
        )
        total += tl.exp(x.to(tl.float32) - m)
    inv = 1.0 / tl.sum(total, axis=0)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=mask, other=float("-inf"))
        y = tl.exp(x.to(tl.float32) - m) * inv
        tl.store(out_ptr + row * n_cols + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


_tuned = triton.autotune(
    configs=[
        triton.Config({"BLOCK": block}, num_warps=warps)
        for block in (256, 1024, 4096)
        for warps in (4, 8)
    ],
    key=["n_cols"],
)(_softmax)


def kernel(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_cols = x.shape[-1]
    rows = (x.numel() // n_cols,)
    if x.is_cuda:
        _tuned[rows](x, out, n_cols)
    else:
        _softmax[rows](x, out, n_cols, BLOCK=min(1024, triton.next_power_of_2(n_cols)))
    return out
