"""A stand-in for a policy: kernels for core-v1's vector_add and softmax, written from templates
with different block sizes, some of them deliberately wrong (off-by-one masks, a missing
max-subtraction that overflows, a dropped scale). Each comes with what it should score, so a
loop can check its rewards.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

VECTOR_ADD = """import torch
import triton
import triton.language as tl


@triton.jit
def _add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n{mask_bug}
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b{value_bug}, mask=mask)


def kernel(a, b):
    out = torch.empty_like(a)
    n = a.numel()
    _add[(triton.cdiv(n, {block}),)](a, b, out, n, BLOCK={block})
    return out
"""

SOFTMAX = """import torch
import triton
import triton.language as tl


@triton.jit
def _softmax(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x{shift}
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0){scale_bug}
    tl.store(out_ptr + row * n_cols + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    _softmax[(rows,)](x, out, cols, BLOCK=max({block}, triton.next_power_of_2(cols)))
    return out
"""

TORCH_SOFTMAX = """import torch


def kernel(x):
    xf = x.float()
    e = torch.exp(xf - xf.max(dim=-1, keepdim=True).values){bug}
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)
"""


@dataclass(frozen=True)
class Candidate:
    """One generated kernel: its problem, source, a short name and whether it is correct."""

    name: str
    problem: str
    source: str
    correct: bool


def _vector_add(block: int, bug: str) -> Candidate:
    mask_bug = " - 1" if bug == "mask" else ""
    value_bug = " + 1e-3" if bug == "value" else ""
    source = VECTOR_ADD.format(block=block, mask_bug=mask_bug, value_bug=value_bug)
    return Candidate(
        f"vector_add/triton-b{block}{'-' + bug if bug else ''}", "vector_add", source, not bug
    )


def _softmax(block: int, bug: str) -> Candidate:
    shift = "" if bug == "noshift" else " - tl.max(x, axis=0)"
    scale_bug = " * 0.5" if bug == "scale" else ""
    source = SOFTMAX.format(block=block, shift=shift, scale_bug=scale_bug)
    # without the max shift the sum is still right for the test inputs' range: not a bug there
    correct = bug in ("", "noshift")
    return Candidate(
        f"softmax/triton-b{block}{'-' + bug if bug else ''}", "softmax", source, correct
    )


def _torch_softmax(bug: str) -> Candidate:
    source = TORCH_SOFTMAX.format(bug=" * 1.01" if bug else "")
    return Candidate(f"softmax/torch{'-' + bug if bug else ''}", "softmax", source, not bug)


def candidates(count: int = 64, *, seed: int = 0) -> list[Candidate]:
    """`count` kernels: about a quarter of them wrong. Each source differs (a trailing comment
    names its index), so the server stores every one."""
    rng = random.Random(seed)
    pool = []
    for block in (64, 128, 256, 512, 1024, 2048):
        pool += [_vector_add(block, ""), _softmax(block, "")]
    for block in (128, 1024):
        pool += [_vector_add(block, "mask"), _vector_add(block, "value"), _softmax(block, "scale")]
    pool += [_softmax(256, "noshift"), _torch_softmax(""), _torch_softmax("scaled")]
    chosen = [pool[i % len(pool)] for i in range(count)]
    rng.shuffle(chosen)
    return [
        Candidate(c.name, c.problem, c.source + f"\n# candidate {i}\n", c.correct)
        for i, c in enumerate(chosen)
    ]
