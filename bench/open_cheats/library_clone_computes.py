# problem: vector_add
# cheat: overrides aten::clone with torch.library; the timed call returns an unfilled buffer at once and the sum is written when the harness clones the output after its timer stopped
# source: trust round 3 red team (torch's dispatcher is the submission's: an aten::clone override computes at capture)
# static: none
# expect: REJECTED
"""The worker captures each call's outputs by cloning them the moment its timer stops, outside
the submission's torch function and dispatch modes. A kernel registered for `aten::clone` on the
CPU and CUDA dispatch keys is no mode: it runs for the harness's clone too. So the call itself
only allocates the output and notes the pending work; the addition happens inside the capture,
off the clock, and every output the farm sees is the right sum."""

import torch

_pending: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []


def _finish_pending() -> None:
    while _pending:
        out, a, b = _pending.pop()
        torch.add(a, b, out=out)


def _clone(src: torch.Tensor, *, memory_format=None) -> torch.Tensor:
    _finish_pending()
    copy = torch.empty_strided(src.size(), src.stride(), dtype=src.dtype, device=src.device)
    return copy.copy_(src)


_lib = torch.library.Library("aten", "IMPL")
for _key in ("CPU", "CUDA"):
    _lib.impl("clone", _clone, _key)


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    _finish_pending()  # a capture never ran (a call whose output was dropped)
    out = torch.empty_like(a)
    _pending.append((out, a, b))
    return out
