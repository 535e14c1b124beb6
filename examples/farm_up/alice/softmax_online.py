#!farm problem=softmax mode=leaderboard label=online-triton
# expect: PASSED
"""Row softmax in Triton, one program per row and two sweeps: the first keeps a running max and
a running sum of exponentials (rescaled whenever the max grows), the second writes the output.
One read fewer than the textbook three sweeps; accumulation in fp32 for bf16 inputs."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_online(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    out_row = out_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    run_max = tl.full([BLOCK], float("-inf"), tl.float32)
    run_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(run_max, x)
        # lanes that have seen nothing yet keep -inf; exp(-inf - -inf) would be NaN
        scale = tl.where(new_max == float("-inf"), 0.0, tl.exp(run_max - new_max))
        term = tl.where(mask, tl.exp(x - new_max), 0.0)
        run_sum = run_sum * scale + term
        run_max = new_max
    row_max = tl.max(run_max, axis=0)
    lane_scale = tl.where(run_max == float("-inf"), 0.0, tl.exp(run_max - row_max))
    inv = 1.0 / tl.sum(run_sum * lane_scale, axis=0)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - row_max) * inv
        tl.store(out_row + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n_cols = x.shape[-1]
    block = min(4096, triton.next_power_of_2(n_cols))
    _softmax_online[(x.numel() // n_cols,)](x, out, n_cols, BLOCK=block)
    return out
