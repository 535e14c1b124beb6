# problem: matmul
# expect: PASSED
"""Split-K matrix multiply with a large workspace: K is cut into up to four slices, each slice's
partial product is written in float32 into one workspace of splits x M x N (as split-K GEMMs and
cuBLAS do), and the partials are summed and cast to the output dtype. The workspace is several
times the output; honest kernels allocate such scratch space and must stay within the limits."""

import torch

SPLITS = 4


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.shape
    n = b.shape[1]
    splits = max(1, min(SPLITS, k // 64))
    bounds = [k * s // splits for s in range(splits + 1)]
    workspace = torch.empty((splits, m, n), dtype=torch.float32, device=a.device)
    for s in range(splits):
        lo, hi = bounds[s], bounds[s + 1]
        torch.matmul(a[:, lo:hi].float(), b[lo:hi].float(), out=workspace[s])
    return workspace.sum(dim=0).to(a.dtype)
