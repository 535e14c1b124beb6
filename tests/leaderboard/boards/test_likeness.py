"""Source likeness: a retyped copy of a kernel measures 1.0, a kernel written differently
measures under COPY_LIKENESS."""

from __future__ import annotations

from leaderboard.boards.likeness import (
    COPY_LIKENESS,
    SKETCH,
    fingerprint,
    likeness,
    likeness_at_most,
)

TILED = """
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)


def kernel(a, b):
    out = torch.empty_like(a)
    n = a.numel()
    add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
    return out
"""

RETYPED = """
import torch, triton
import triton.language as tl

# my own kernel, honest
@triton.jit
def vadd(x, y, z, count, BLOCK: tl.constexpr):
    p = tl.program_id(0)
    idx = p * BLOCK + tl.arange(0, BLOCK)
    keep = idx < count
    u = tl.load(x + idx, mask=keep)

    v = tl.load(y + idx, mask=keep)
    tl.store(z + idx, u + v, mask=keep)


def kernel(first, second):
    result = torch.empty_like(first)
    count = first.numel()
    vadd[(triton.cdiv(count, 1024),)](first, second, result, count, BLOCK=1024)
    return result
"""

PERSISTENT = """
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr, PROGRAMS: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    for base in range(start, n, BLOCK * PROGRAMS):
        offs = base + tl.arange(0, BLOCK)
        mask = offs < n
        total = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, total, mask=mask)


def kernel(a, b):
    out = torch.empty_like(a)
    add_kernel[(24,)](a, b, out, a.numel(), BLOCK=4096, PROGRAMS=24)
    return out
"""


def test_a_retyped_copy_is_a_copy():
    # new names, comments, blank lines; only the merged import line differs as tokens
    assert COPY_LIKENESS <= likeness(fingerprint(TILED), fingerprint(RETYPED)) < 1.0
    renamed = TILED.replace("out_ptr", "dst").replace("offs", "i").replace("add_kernel", "k")
    assert likeness(fingerprint(TILED), fingerprint(renamed + "\n# tuned\n")) == 1.0


def test_a_kernel_written_differently_is_not_a_copy():
    assert likeness(fingerprint(TILED), fingerprint(PERSISTENT)) < COPY_LIKENESS
    assert likeness(fingerprint(TILED), fingerprint("def kernel(a, b):\n    return a + b\n")) < 0.2


def test_long_sources_keep_a_bounded_sketch_and_estimate_their_likeness():
    body = "".join(f"def f{i}(x):\n    return x * {i} + {i * i}\n" for i in range(400))
    other = body.replace("+ 7", "- 7")  # one line of 800 differs
    fp = fingerprint(body)
    assert len(fp) == SKETCH
    assert likeness(fp, fingerprint(other)) >= COPY_LIKENESS


def test_a_source_that_does_not_tokenize_has_no_fingerprint():
    assert fingerprint("def kernel(:\n  '''unterminated") == []
    assert likeness([], fingerprint(TILED)) == 0.0


def test_the_cheap_bound_is_never_below_the_likeness():
    import random

    rng = random.Random(3)
    for _ in range(200):
        base = rng.sample(range(10_000), rng.randrange(1, 600))
        other = base[: rng.randrange(0, len(base) + 1)] + rng.sample(range(10_000), 50)
        a, b = sorted(set(base))[:SKETCH], sorted(set(other))[:SKETCH]
        fa, fb = frozenset(a), frozenset(b)
        assert likeness_at_most(fa, fb) >= likeness(a, b) - 1e-12
