# problem: vector_add
# cheat: overrides aten::equal with torch.library so that every comparison of two tensors says "equal", then adds in place into the first input and returns it (no output allocation): an "inputs unchanged" check made with torch.equal in the worker believes it
# source: trust round 3 red team (torch's dispatcher is the submission's: an aten::equal override fools an in-process input check)
# static: none
# expect: INCORRECT
"""An input check that runs in the submission's process with torch.equal goes through torch's
dispatcher, where a kernel registered for `aten::equal` on the CPU and CUDA keys answers for
every tensor: it says True. The kernel then writes the sum into `a` and returns `a` itself,
which saves the output's allocation (and, on a GPU, its first-touch cost) in every timed call."""

import torch


def _always_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    return True


_lib = torch.library.Library("aten", "IMPL")
for _key in ("CPU", "CUDA"):
    _lib.impl("equal", _always_equal, _key)


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.add_(b)
