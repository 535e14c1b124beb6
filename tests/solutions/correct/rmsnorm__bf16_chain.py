# problem: rmsnorm
# expect: PASSED
"""RMSNorm as a chain of torch ops in the input's dtype (square, mean, add eps, rsqrt, two
multiplies), with no fp32 upcast: honest in-dtype arithmetic that the calibrated bf16
tolerance admits (docs/tolerances.md)."""

import torch


def kernel(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight
