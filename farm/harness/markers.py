"""Triton kernels that bracket each timed call in the profiler trace (see timing.py).

Their names are what the trace parser looks for; the flush doubles as the L2 flush.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

_BLOCK = 4096


@triton.jit
def farm_l2_flush(buf_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(buf_ptr + offs, tl.zeros([BLOCK], dtype=tl.int32), mask=offs < n)


@triton.jit
def farm_call_end(buf_ptr):
    tl.store(buf_ptr, 0)


def flush_l2(buf: torch.Tensor) -> None:
    """Overwrite all of `buf` (int32), evicting the caches."""
    n = buf.numel()
    farm_l2_flush[(triton.cdiv(n, _BLOCK),)](buf, n, BLOCK=_BLOCK)


def call_end(buf: torch.Tensor) -> None:
    farm_call_end[(1,)](buf)
