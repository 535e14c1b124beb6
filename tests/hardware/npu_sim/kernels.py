"""Kernels the npu-sim tests cost: Triton (interpreted) and plain PyTorch.

Import only after `farm.hardware.npu_sim.install()` (conftest.py does it), so `@triton.jit`
builds interpreted kernels.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# -- elementwise ---------------------------------------------------------------------------


@triton.jit
def _add(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(o_ptr + offs, x + y, mask=mask)


def triton_add(x: torch.Tensor, y: torch.Tensor, block: int = 1024) -> torch.Tensor:
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block)
    return out


@triton.jit
def _scale_rows(x_ptr, o_ptr, n_cols, BLOCK: tl.constexpr):
    """out = x * sum(x) per row: one pass for the sum, a second pass re-reading the row."""
    row = tl.program_id(0)
    base = x_ptr + row * n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(base + offs, mask=offs < n_cols, other=0.0)
    total = tl.sum(acc, axis=0)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(base + offs, mask=offs < n_cols, other=0.0)
        tl.store(o_ptr + row * n_cols + offs, x * total, mask=offs < n_cols)


def scale_rows(x: torch.Tensor, block: int = 4096) -> torch.Tensor:
    out = torch.empty_like(x)
    _scale_rows[(x.shape[0],)](x, out, x.shape[1], BLOCK=block)
    return out


@triton.jit
def _copy_twice(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    """Each program copies its block, then also loads (and adds) its neighbour's block."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    nb = ((pid + 1) % tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.load(x_ptr + nb, mask=nb < n)
    tl.store(o_ptr + offs, x + 0.0 * y, mask=offs < n)


@triton.jit
def _copy_once(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(o_ptr + offs, x + 0.0 * x, mask=offs < n)


def copy(x: torch.Tensor, twice: bool, block: int = 512) -> torch.Tensor:
    out = torch.empty_like(x)
    kernel = _copy_twice if twice else _copy_once
    kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
    return out


# -- softmax -------------------------------------------------------------------------------


@triton.jit
def _softmax(x_ptr, o_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(o_ptr + row * n_cols + offs, y.to(o_ptr.dtype.element_ty), mask=mask)


def triton_softmax(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    _softmax[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def torch_softmax_unfused(x: torch.Tensor) -> torch.Tensor:
    m = x.amax(dim=-1, keepdim=True)
    e = torch.exp(x - m)
    return e / e.sum(dim=-1, keepdim=True)


# -- matmul --------------------------------------------------------------------------------


@triton.jit
def _matmul_tiled(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


def matmul_tiled(a: torch.Tensor, b: torch.Tensor, bm: int = 32, bn: int = 32, bk: int = 32):
    (m, k), n = a.shape, b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype)
    _matmul_tiled[(m // bm, n // bn)](a, b, c, m, n, k, BM=bm, BN=bn, BK=bk)
    return c


@triton.jit
def _matmul_naive(a_ptr, b_ptr, c_ptr, M, N, K, BK: tl.constexpr):
    """One program per output element: a row of A times a column of B."""
    i = tl.program_id(0)
    j = tl.program_id(1)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + i * K + rk)
    b = tl.load(b_ptr + rk * N + j)
    tl.store(c_ptr + i * N + j, tl.sum(a * b, axis=0))


def matmul_naive(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    (m, k), n = a.shape, b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype)
    _matmul_naive[(m, n)](a, b, c, m, n, k, BK=k)
    return c


@triton.jit
def _matmul_row_panel(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """One program per BM rows of C, walking every column block: the A panel is loaded once
    per column block, so on-chip reuse decides what it costs."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    for n0 in range(0, N, BN):
        rn = n0 + tl.arange(0, BN)
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k in range(0, K, BK):
            rk = k + tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


def matmul_row_panel(a: torch.Tensor, b: torch.Tensor, bm: int = 16, bn: int = 16, bk: int = 32):
    (m, k), n = a.shape, b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype)
    _matmul_row_panel[(m // bm,)](a, b, c, m, n, k, BM=bm, BN=bn, BK=bk)
    return c


# -- misc ----------------------------------------------------------------------------------


@triton.jit
def _spin(x_ptr, o_ptr, ITERS: tl.constexpr):
    acc = tl.load(x_ptr + tl.arange(0, 16))
    for _ in range(ITERS):
        acc = acc * 1.0001
    tl.store(o_ptr + tl.arange(0, 16), acc)


def spin(x: torch.Tensor, iters: int) -> torch.Tensor:
    out = torch.empty_like(x)
    _spin[(1,)](x, out, ITERS=iters)
    return out


@triton.jit
def _bf16_direct_add(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    """bf16 arithmetic with no explicit upcast (the interpreter alone would add bit patterns)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(o_ptr + offs, x * 2.0 + y - 1.0, mask=mask)


def bf16_direct(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    _bf16_direct_add[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
    return out
