# problem: softmax
# expect: PASSED
"""Row softmax as an unfused chain of torch ops in the input's dtype (max, subtract, exp, sum,
divide): no fp32 upcast, so bf16 inputs are computed in bf16 at every step. Honest, and within
the bf16 tolerance calibrated from exactly such chains (docs/tolerances.md)."""

import torch


def kernel(x: torch.Tensor) -> torch.Tensor:
    shifted = x - x.amax(dim=-1, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=-1, keepdim=True)
