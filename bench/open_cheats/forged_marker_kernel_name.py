# problem: vector_add
# cheat: after its real addition, launches Triton kernels named like the harness's markers (farm_l2_flush, then a one-element kernel), so a trace read by kernel name starts the call's span after the forged flush and times almost nothing
# source: trust round 3 red team (profiler markers recognised by kernel name can be forged by naming a kernel)
# static: none
# device: cuda
# expect: REJECTED
"""CUDA only. The call's span runs from the first device activity after the L2 flush kernel to
the last one before the end marker. A kernel of the submission's own that is named
`farm_l2_flush` and launched after the real work makes a reader that goes by names see a new
flush there: the call's span becomes the one-element kernel launched after it. On the CPU there
is no profiler trace to forge: the marker-named kernels are not launched and the file is an
honest Triton addition there (PASSED)."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (a + b).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def farm_l2_flush(buf_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(buf_ptr + offs, tl.zeros([BLOCK], dtype=tl.int32), mask=offs < n)


@triton.jit
def _touch(buf_ptr):
    tl.store(buf_ptr, 1)


_scratch: dict[torch.device, torch.Tensor] = {}


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(a)
    n = out.numel()
    _add[(triton.cdiv(n, BLOCK),)](a, b, out, n, BLOCK=BLOCK)
    if a.is_cuda:
        scratch = _scratch.setdefault(
            a.device, torch.zeros(BLOCK, dtype=torch.int32, device=a.device)
        )
        farm_l2_flush[(1,)](scratch, BLOCK, BLOCK=BLOCK)  # the forged start marker
        _touch[(1,)](scratch)  # the only activity a name-reading parser then counts
    return out
