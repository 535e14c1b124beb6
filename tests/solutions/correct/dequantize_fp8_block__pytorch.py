# problem: dequantize_fp8_block
# expect: PASSED
"""Block dequantisation by broadcasting each 128x128 scale over its block."""

import torch
import torch.nn.functional as F

BLOCK = 128


def kernel(w, scale):
    n, k = w.shape
    pad_n, pad_k = -n % BLOCK, -k % BLOCK
    wf = F.pad(w.float(), (0, pad_k, 0, pad_n))
    blocks = wf.reshape(scale.shape[0], BLOCK, scale.shape[1], BLOCK) * scale[:, None, :, None]
    return blocks.reshape(n + pad_n, k + pad_k)[:n, :k].to(torch.bfloat16)
