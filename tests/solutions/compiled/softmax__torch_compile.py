# problem: softmax
# expect: PASSED
"""Row softmax through torch.compile (Inductor generates and compiles the kernel on the first
call; its compile workers stay alive, idle, afterwards). Honest: the farm judges threads by the
work they do after a call, not by their existence."""

import torch


def _softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


_compiled = torch.compile(_softmax, dynamic=False)


def kernel(x: torch.Tensor) -> torch.Tensor:
    return _compiled(x)
