# problem: vector_add
# cheat: returns an unfilled buffer and does each call's work during the next call, so a timed call pays for a cheaper, earlier one (or none)
# source: GPU MODE reference-kernels #104 (batch-and-skip)
# static: MODULE_CACHE
# expect: INCORRECT
import torch

_pending = []


def kernel(a, b):
    while _pending:
        x, y, out = _pending.pop()
        torch.add(x, y, out=out)
    out = torch.empty_like(a)
    _pending.append((a, b, out))
    return out
