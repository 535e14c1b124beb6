"""Recording a call as a trace (untrusted side: runs in the worker, beside the submission).

Nothing here needs to be out of the submission's reach: the trace is evidence that the trusted
replay checks (farm.hardware.npu_sim.replay), not a measurement. Triton launches are recorded
and not run (the replay runs them); PyTorch ops are recorded and run, so host code that reads a
torch result keeps working.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from farm.hardware.npu_sim.trace import SUPPORTED, Recorder, Trace, TraceError, Unsupported

# Ops that only describe memory (views, metadata) are not steps: tensors are recorded with their
# storage, offset, shape and stride wherever they are used.
_SKIPPED = frozenset(
    {
        "aten::detach",
        "aten::alias",
        "aten::lift_fresh",
        "aten::_local_scalar_dense",
        "aten::is_same_size",
        "aten::sym_size",
        "aten::sym_stride",
        "aten::sym_numel",
        "aten::sym_storage_offset",
        "aten::_unsafe_view",
        "aten::view",
        "aten::_reshape_alias",
        "aten::as_strided",
        "aten::record_stream",
        "aten::is_nonzero",
        "aten::equal",
    }
)
_REFUSED = frozenset({"aten::set_", "aten::resize_", "aten::as_strided_"})


def _record_mode(rec: Recorder) -> TorchDispatchMode:
    class RecordMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = func._schema.name
            if name in _REFUSED:
                raise TraceError(f"{name} changes a tensor's storage; npu-sim cannot replay it")
            out = func(*args, **kwargs)
            if func.is_view or name in _SKIPPED or torch.Tag.inplace_view in func.tags:
                return out
            if not any(isinstance(t, torch.Tensor) for t in _leaves(out)):
                return out
            rec.op(func, args, kwargs, out)
            return out

    return RecordMode()


def _leaves(v: Any) -> list[Any]:
    from torch.utils._pytree import tree_leaves

    return list(tree_leaves(v))


def _launch_recorder(rec: Recorder) -> Callable[..., None]:
    """A `GridExecutor.__call__` that records the launch instead of running it."""

    def __call__(self, *args_dev, **kwargs):
        spec = inspect.getfullargspec(self.fn)
        kwargs = {k: v for k, v in kwargs.items() if k in spec.args or k in spec.kwonlyargs}
        call = inspect.getcallargs(self.fn, *args_dev, **kwargs)
        grid = self.grid(call) if callable(self.grid) else self.grid
        rec.launch(self.fn, tuple(grid), call, list(self.constexprs))

    return __call__


def record_call(
    call: Callable[[list[torch.Tensor]], list[torch.Tensor]], inputs: Sequence[torch.Tensor]
) -> tuple[Trace, list[torch.Tensor]]:
    """Run `call(inputs)` with Triton launches recorded (not run) and PyTorch ops recorded.

    Returns the trace and what the call returned. Raises TraceError when the call does
    something a trace cannot hold, and whatever the call raised otherwise.
    """
    from triton.runtime import autotuner
    from triton.runtime import interpreter as interp

    rec = Recorder(inputs)
    previous = interp.GridExecutor.__call__, autotuner.Autotuner.run
    interp.GridExecutor.__call__ = _launch_recorder(rec)
    autotuner.Autotuner.run = _autotuned
    try:
        with _record_mode(rec):
            outputs = call(list(inputs))
    finally:
        interp.GridExecutor.__call__, autotuner.Autotuner.run = previous
    return rec.finish(outputs), outputs


def _autotuned(self: Any, *args: Any, **kwargs: Any) -> None:
    """An autotuned launch: its benchmark runs would be recorded as launches of every
    configuration, and the interpreter cannot time them."""
    name = getattr(getattr(self, "fn", None), "__name__", "a kernel")
    raise Unsupported(
        f"Triton kernel {name} is @triton.autotune'd; {SUPPORTED}. "
        "Launch it with one fixed configuration for npu-sim"
    )
