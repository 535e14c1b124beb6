# problem: attention
# expect: PASSED
"""Naive: one program per query row on the vector unit for the scores and for P @ V (every
row re-reads all of K and V), with the scores and probabilities in HBM between launches."""

import torch
import triton
import triton.language as tl


@triton.jit
def _score_row(q_ptr, k_ptr, s_ptr, SQ, SK, scale, D: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    bh = row // SQ
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + row * D + rd).to(tl.float32)
    for start in range(0, SK, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(
            k_ptr + bh * SK * D + rn[:, None] * D + rd[None, :], mask=rn[:, None] < SK, other=0.0
        )
        s = tl.sum(q[None, :] * k.to(tl.float32), axis=1) * scale
        tl.store(s_ptr + row * SK + rn, s, mask=rn < SK)


@triton.jit
def _softmax_rows(s_ptr, SK, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    s = tl.load(s_ptr + row * SK + offs, mask=offs < SK, other=float("-inf"))
    e = tl.exp(s - tl.max(s, axis=0))
    tl.store(s_ptr + row * SK + offs, e / tl.sum(e, axis=0), mask=offs < SK)


@triton.jit
def _pv_row(p_ptr, v_ptr, o_ptr, SQ, SK, D: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    bh = row // SQ
    rd = tl.arange(0, D)
    acc = tl.zeros([D], tl.float32)
    for start in range(0, SK, BN):
        rn = start + tl.arange(0, BN)
        p = tl.load(p_ptr + row * SK + rn, mask=rn < SK, other=0.0)
        v = tl.load(
            v_ptr + bh * SK * D + rn[:, None] * D + rd[None, :], mask=rn[:, None] < SK, other=0.0
        )
        acc += tl.sum(p[:, None] * v.to(tl.float32), axis=0)
    tl.store(o_ptr + row * D + rd, acc.to(o_ptr.dtype.element_ty))


def kernel(q, k, v):
    b, h, sq, d = q.shape
    sk = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    rows = b * h * sq
    scores = torch.empty(rows, sk, dtype=torch.float32)
    out = torch.empty_like(q)
    _score_row[(rows,)](q, k, scores, sq, sk, d**-0.5, D=d, BN=64)
    _softmax_rows[(rows,)](scores, sk, BLOCK=triton.next_power_of_2(sk))
    _pv_row[(rows,)](scores, v, out, sq, sk, D=d, BN=64)
    return out
