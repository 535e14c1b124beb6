# problem: conv2d
# expect: PASSED
"""3x3 convolution through cuDNN in fp32, with TF32 switched off (fp32 problems need fp32)."""

import torch
import torch.nn.functional as F


def kernel(x, w):
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        return F.conv2d(x.float(), w.float(), padding=1).to(x.dtype)
