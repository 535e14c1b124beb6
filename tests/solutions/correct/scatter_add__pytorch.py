# problem: scatter_add
# expect: PASSED
"""MoE combine with scatter_add on a fresh fp32 copy of base (base itself is not modified)."""


def kernel(base, index, src):
    out = base.float().clone()
    out.scatter_add_(0, index[:, None].expand(-1, src.shape[1]), src.float())
    return out.to(base.dtype)
