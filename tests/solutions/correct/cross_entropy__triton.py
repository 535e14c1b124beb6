# problem: cross_entropy
# expect: PASSED
"""Per-token cross-entropy: one program per row computes logsumexp - logit[target] in fp32."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _cross_entropy(x_ptr, target_ptr, loss_ptr, vocab, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * vocab
    cols = tl.arange(0, BLOCK)
    row_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, vocab, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < vocab, other=float("-inf"))
        row_max = tl.maximum(row_max, x.to(tl.float32))
    m = tl.max(row_max, axis=0)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, vocab, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < vocab, other=float("-inf"))
        total += tl.exp(x.to(tl.float32) - m)
    target = tl.load(target_ptr + row)
    picked = tl.load(x_row + target).to(tl.float32)
    tl.store(loss_ptr + row, tl.log(tl.sum(total, axis=0)) + m - picked)


def kernel(logits, target):
    logits = logits.contiguous()
    rows, vocab = logits.shape
    loss = torch.empty(rows, device=logits.device, dtype=torch.float32)
    block = min(BLOCK, triton.next_power_of_2(vocab))
    _cross_entropy[(rows,)](logits, target, loss, vocab, BLOCK=block)
    return loss
