# problem: embedding
# expect: PASSED
"""Embedding lookup: program (token, column block) copies one slice of the token's row."""

import torch
import triton
import triton.language as tl

BLOCK = 512


@triton.jit
def _embedding(ids_ptr, table_ptr, out_ptr, hidden, BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < hidden
    row = tl.load(ids_ptr + token)
    values = tl.load(table_ptr + row * hidden + cols, mask=mask)
    tl.store(out_ptr + token * hidden + cols, values, mask=mask)


def kernel(ids, table):
    table = table.contiguous()
    hidden = table.shape[1]
    out = torch.empty(ids.shape[0], hidden, device=table.device, dtype=table.dtype)
    _embedding[(ids.shape[0], triton.cdiv(hidden, BLOCK))](ids, table, out, hidden, BLOCK=BLOCK)
    return out
