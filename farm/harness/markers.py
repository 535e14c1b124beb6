"""Triton kernels that bracket each timed call in the profiler trace (see timing.py).

Each launch is recorded as it is made (farm.harness.spans.Mark: the kind and a monotonic-clock
bracket around the launch call): the trace parser recognises the markers by these records and
the launches' correlation ids, not by their names, which a submission can copy. The flush
doubles as the L2 flush.
"""

from __future__ import annotations

import time

import torch
import triton
import triton.language as tl

from farm.harness import spans

_BLOCK = 4096


@triton.jit
def farm_l2_flush(buf_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(buf_ptr + offs, tl.zeros([BLOCK], dtype=tl.int32), mask=offs < n)


@triton.jit
def farm_call_end(buf_ptr):
    tl.store(buf_ptr, 0)


def flush_l2(buf: torch.Tensor) -> None:
    """Overwrite all of `buf` (int32), evicting the caches; the launch is recorded."""
    n = buf.numel()
    before = time.perf_counter_ns()
    farm_l2_flush[(triton.cdiv(n, _BLOCK),)](buf, n, BLOCK=_BLOCK)
    spans.record(spans.Mark(spans.FLUSH_KERNEL, before, time.perf_counter_ns()))


def call_end(buf: torch.Tensor) -> None:
    """Mark the end of a call; the launch is recorded."""
    before = time.perf_counter_ns()
    farm_call_end[(1,)](buf)
    spans.record(spans.Mark(spans.END_KERNEL, before, time.perf_counter_ns()))
