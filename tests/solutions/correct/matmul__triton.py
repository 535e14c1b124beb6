# problem: matmul
# expect: PASSED
"""Tiled GEMM with tl.dot: each program computes one BLOCK_M x BLOCK_N tile of a @ b,
accumulating in fp32 over K. fp32 inputs use IEEE fp32 products (never TF32); bf16 inputs use
bf16 tensor-core products on a GPU, and are widened to fp32 first under the Triton
interpreter, which has no bf16 dot."""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
            stride_cm, stride_cn, WIDEN: tl.constexpr, BLOCK_M: tl.constexpr,
            BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a_mask = (rm[:, None] < M) & (k0 + rk[None, :] < K)
        b_mask = (k0 + rk[:, None] < K) & (rn[None, :] < N)
        a = tl.load(a_ptr + rm[:, None].to(tl.int64) * stride_am + (k0 + rk[None, :]) * stride_ak,
                    mask=a_mask, other=0.0)
        b = tl.load(b_ptr + (k0 + rk[:, None]).to(tl.int64) * stride_bk + rn[None, :] * stride_bn,
                    mask=b_mask, other=0.0)
        if WIDEN:
            acc += tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision="ieee")
        else:
            acc += tl.dot(a, b)
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    c_offs = rm[:, None].to(tl.int64) * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptr + c_offs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


def kernel(a, b):
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, device=a.device, dtype=a.dtype)
    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    widen = a.dtype == torch.float32 or interpreted
    bm, bn, bk = (64, 64, 32) if a.dtype == torch.float32 else (128, 128, 64)
    if interpreted:
        bm, bn, bk = 32, 32, 32
    grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
    _matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                  c.stride(0), c.stride(1), WIDEN=widen, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    return c
