# problem: conv2d
# expect: COMPILE_ERROR
"""Flaw (missing entry point): the function has the wrong name, so there is nothing to call."""

import torch.nn.functional as F


def conv(x, w):
    return F.conv2d(x, w, padding=1)
