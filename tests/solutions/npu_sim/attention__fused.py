# problem: attention
# expect: PASSED
"""Fused (flash attention): one program per (batch x head, 64 queries) streams K and V in
blocks of 64 keys with an online softmax; scores never leave the chip."""

import torch
import triton
import triton.language as tl


@triton.jit
def _flash(
    q_ptr, k_ptr, v_ptr, o_ptr, SQ, SK, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr
):
    bh = tl.program_id(0).to(tl.int64)
    rm = tl.program_id(1) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(
        q_ptr + bh * SQ * D + rm[:, None] * D + rd[None, :], mask=rm[:, None] < SQ, other=0.0
    )
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for start in range(0, SK, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(
            k_ptr + bh * SK * D + rn[:, None] * D + rd[None, :], mask=rn[:, None] < SK, other=0.0
        )
        v = tl.load(
            v_ptr + bh * SK * D + rn[:, None] * D + rd[None, :], mask=rn[:, None] < SK, other=0.0
        )
        s = tl.dot(q, tl.trans(k)) * scale
        s = tl.where(rn[None, :] < SK, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(
        o_ptr + bh * SQ * D + rm[:, None] * D + rd[None, :],
        out.to(o_ptr.dtype.element_ty),
        mask=rm[:, None] < SQ,
    )


def kernel(q, k, v):
    b, h, sq, d = q.shape
    sk = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    out = torch.empty_like(q)
    _flash[(b * h, triton.cdiv(sq, 64))](q, k, v, out, sq, sk, d**-0.5, D=d, BM=64, BN=64)
    return out
