# problem: gelu
# expect: INCORRECT
"""Flaw (low precision): the tanh approximation of GELU is off by up to ~5e-4, far outside the
fp32 tolerance of the exact (erf) GELU."""

import torch.nn.functional as F


def kernel(x):
    return F.gelu(x, approximate="tanh")
