"""Run source code written for CUDA on another device (a CPU host, npu-sim).

GPU MODE references make their data with `torch.Generator(device="cuda")` and
`torch.randn(..., device="cuda")`. Inside `on(device)`, every `device=` argument that names CUDA,
`Tensor.cuda()`, `Tensor.to("cuda")`, `torch.Generator(device="cuda")` and
`torch.cuda.synchronize()` are redirected to `device`; on a CUDA device nothing changes.

This file is copied verbatim beside each imported GPU MODE problem's reference.py (which may
import only torch and its own files), and the importer uses it to probe sources on a CPU host.
"""

import contextlib

import torch
from torch.overrides import TorchFunctionMode


def _redirect(device, to):
    """`to` when `device` names CUDA (a string, torch.device or bare index), else `device`."""
    if device is None:
        return None
    if isinstance(device, int) and not isinstance(device, bool):
        return to
    try:
        kind = torch.device(device).type
    except (RuntimeError, TypeError):
        return device
    return to if kind == "cuda" else device


class _Redirect(TorchFunctionMode):
    def __init__(self, to):
        super().__init__()
        self.to = to

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if "device" in kwargs:
            kwargs["device"] = _redirect(kwargs["device"], self.to)
        if func is torch.Tensor.cuda:
            return args[0].to(self.to)
        if func is torch.Tensor.to and len(args) > 1 and isinstance(args[1], str | torch.device):
            args = (args[0], _redirect(args[1], self.to), *args[2:])
        return func(*args, **kwargs)


def _generator_class(to):
    """A stand-in for torch.Generator (still a class: `torch.Generator | None` and isinstance
    keep working) whose instances are real generators on `to` when CUDA is asked for."""
    original = torch.Generator

    class Meta(type(original)):
        def __instancecheck__(cls, obj):
            return isinstance(obj, original)

    class Generator(original, metaclass=Meta):
        def __new__(cls, device=None):
            return original(device=_redirect(device, to) or "cpu")

    return Generator


@contextlib.contextmanager
def on(device):
    """Run the block with CUDA redirected to `device` (no change when it is a CUDA device)."""
    device = torch.device(device)
    if device.type == "cuda":
        yield
        return
    generator, synchronize = torch.Generator, torch.cuda.synchronize
    torch.Generator = _generator_class(device)
    torch.cuda.synchronize = lambda *args, **kwargs: None
    try:
        with _Redirect(device):
            yield
    finally:
        torch.Generator, torch.cuda.synchronize = generator, synchronize
