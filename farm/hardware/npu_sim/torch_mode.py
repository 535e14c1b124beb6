"""Costing PyTorch code: every aten op that runs is one launch on the simulated chip.

A `TorchDispatchMode` sees each aten op after PyTorch's own decompositions (so `torch.matmul`
arrives as `mm`/`bmm`, `F.linear` as `addmm`). Each op that does work becomes a launch
(costmodel.split_op) with:
- bytes: every distinct tensor argument read once (an expanded view counts the storage it
  spans, not its logical size) plus every output tensor written once;
- FLOPs: matrix ops (mm, bmm, addmm, convolution, attention, ...) by torch.utils.flop_counter's
  formulas on the matrix unit; everything else numel x a per-op weight on the vector unit.
Views, allocations and metadata ops cost nothing. So an unfused chain of ops pays a launch and
a round trip through HBM per op, as eager PyTorch does on real hardware.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from farm.hardware.npu_sim.costmodel import CostParams, merge_work, split_op
from farm.hardware.npu_sim.ledger import Ledger

aten = torch.ops.aten

# Ops that allocate or describe memory without moving data.
FREE_OPS = frozenset(
    {
        "aten::empty",
        "aten::empty_like",
        "aten::empty_strided",
        "aten::new_empty",
        "aten::new_empty_strided",
        "aten::detach",
        "aten::alias",
        "aten::lift_fresh",
        "aten::_local_scalar_dense",
        "aten::set_",
        "aten::resize_",
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
    }
)
# Vector FLOPs per element (default 1). Data movement ops do no arithmetic.
OP_WEIGHTS = {
    "exp": 4,
    "exp2": 4,
    "expm1": 4,
    "log": 4,
    "log2": 4,
    "log1p": 4,
    "sqrt": 4,
    "rsqrt": 4,
    "sin": 4,
    "cos": 4,
    "tanh": 4,
    "sigmoid": 5,
    "erf": 4,
    "div": 4,
    "reciprocal": 4,
    "pow": 4,
    "silu": 6,
    "gelu": 8,
    "_softmax": 11,
    "_log_softmax": 11,
    "native_layer_norm": 8,
    "_fused_rms_norm": 7,
    "native_group_norm": 8,
    "copy_": 0,
    "clone": 0,
    "cat": 0,
    "stack": 0,
    "fill_": 0,
    "zero_": 0,
    "zeros": 0,
    "ones": 0,
    "full": 0,
    "zeros_like": 0,
    "ones_like": 0,
    "full_like": 0,
    "index_select": 0,
    "gather": 0,
    "embedding": 0,
    "constant_pad_nd": 0,
    "slice_scatter": 0,
    "select_scatter": 0,
    "repeat": 0,
    "contiguous": 0,
    "index": 0,
    "scatter": 0,
}
# CPU spellings of ops whose FLOP formula is registered under another name.
_FLOP_ALIASES = {
    "_scaled_dot_product_flash_attention_for_cpu": "_scaled_dot_product_flash_attention"
}


def flop_formulas() -> dict[str, Callable[..., int]]:
    """torch.utils.flop_counter's formulas by op name (copied, so later edits to the registry
    cannot change our counts)."""
    from torch.utils.flop_counter import flop_registry

    table = {
        getattr(op, "__name__", ""): fn
        for op, fn in flop_registry.items()
        if hasattr(op, "__name__")
    }
    for alias, name in _FLOP_ALIASES.items():
        if name in table:
            table[alias] = table[name]
    return table


def _span_bytes(t: torch.Tensor) -> int:
    """Bytes a kernel must read for `t`: its logical size, or less for expanded views."""
    if t.numel() == 0:
        return 0
    span = 1 + sum((s - 1) * abs(st) for s, st in zip(t.shape, t.stride()))
    return min(t.numel(), span) * t.element_size()


def _distinct(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    seen: list[tuple] = []
    out = []
    for t in tensors:
        key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype)
        if key not in seen:
            seen.append(key)
            out.append(t)
    return out


def _tensors_of(value: Any) -> list[torch.Tensor]:
    return [t for t in tree_leaves(value) if isinstance(t, torch.Tensor)]


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def op_work(func: Any, args: tuple, kwargs: dict, out: Any, formulas: dict) -> tuple:
    """Work of one op: ((unit, dtype, FLOPs), ...) as costmodel.Work."""
    name = func.overloadpacket.__name__
    inputs, outputs = _tensors_of((args, kwargs)), _tensors_of(out)
    if not inputs and not outputs:
        return ()
    if name in formulas:
        flops = int(formulas[name](*args, **kwargs, out_val=out))
        return merge_work([("tensor", _dtype_name((inputs or outputs)[0]), flops)])
    base = name[:-1] if name.endswith("_") and name not in OP_WEIGHTS else name
    weight = OP_WEIGHTS.get(base, 1)
    sized = max(t.numel() for t in inputs + outputs)
    return merge_work([("vector", _dtype_name((outputs or inputs)[0]), weight * sized)])


def make_mode_class(ledger_of: Callable[[], Ledger | None], params: CostParams) -> type:
    """The dispatch mode class that records ops into `ledger_of()`'s ledger."""
    formulas = flop_formulas()

    def record(func: Any, args: tuple, kwargs: dict, out: Any, led: Ledger) -> None:
        inputs = _distinct(_tensors_of((args, kwargs)))
        outputs = _distinct(_tensors_of(out))
        read = sum(_span_bytes(t) for t in inputs)
        write = sum(t.numel() * t.element_size() for t in outputs)
        work = op_work(func, args, kwargs, out, formulas)
        if read + write == 0 and not work:
            return
        led.touch(led.read, [(t.untyped_storage().data_ptr(), _span_bytes(t)) for t in inputs])
        led.touch(
            led.written,
            [(t.untyped_storage().data_ptr(), t.numel() * t.element_size()) for t in outputs],
        )
        led.add_bytes(read + write)
        led.seal(split_op(str(func), read, write, work, params))
        led.check_clock()

    class CostMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            led = ledger_of()
            if led is None or led.triton_depth or func.is_view or func._schema.name in FREE_OPS:
                return out
            if torch.Tag.inplace_view in func.tags:
                return out
            record(func, args, kwargs, out, led)
            return out

    return CostMode
