"""A counting replacement for the Triton interpreter's op builder.

Every `tl.*` op of an interpreted kernel reaches the interpreter's builder (`create_*`
methods). `make_builder` returns a subclass whose methods count, into the ledger of the call
being measured, the HBM bytes of loads and stores (active lanes only) and the FLOPs of dots
(matrix unit) and of floating-point elementwise ops, casts and math (vector unit), and which
carries bf16 values as float32 shadows (see bf16.py). Integer and pointer arithmetic (address
generation) is not counted: on the NPU it runs on the scalar unit and the DMA engines.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import triton.language as tl
from triton.runtime import interpreter as interp

from farm.hardware.npu_sim import bf16
from farm.hardware.npu_sim.ledger import Ledger

# Vector-unit cost per element, in FLOPs, of ops heavier than one add (default 1).
TRANSCENDENTAL = 4
_UNARY_WEIGHT = {np.exp: 4, np.exp2: 4, np.log: 4, np.log2: 4, np.sqrt: 4, np.sin: 4, np.cos: 4}
_BINARY_WEIGHT = {np.divide: 4, np.fmod: 4}

BF16_FLAG = "npu_sim_bf16"


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f"


def _float_dtype(*arrays: np.ndarray) -> str | None:
    for a in arrays:
        if _is_float(a):
            return a.dtype.name
    return None


def _elem_size(ty: Any) -> int:
    return max(1, ty.primitive_bitwidth // 8)


def _active(ptrs: Any, mask: Any) -> np.ndarray:
    if mask is None:
        return ptrs.data.ravel()
    return ptrs.data[np.broadcast_to(mask.data, ptrs.data.shape)]


def _shadow(handle: Any) -> Any:
    """A bf16 handle (uint16 bits) as a float32 shadow handle."""
    if handle.data.dtype == np.float32:
        return handle
    out = interp.TensorHandle(bf16.bits_to_f32(handle.data), tl.float32)
    out.set_attr(BF16_FLAG, True)
    return out


def _bits(handle: Any) -> Any:
    """A float32 shadow handle as bf16 bits (what memory holds)."""
    if handle is None or handle.data.dtype != np.float32:
        return handle
    return interp.TensorHandle(bf16.f32_to_bits(handle.data), tl.bfloat16)


def _dot_dtype(a: np.ndarray, b: np.ndarray) -> str:
    """The matrix-unit dtype of a dot: bf16 when both float32 operands hold bf16 values."""
    if bf16.is_bf16_exact(a) and bf16.is_bf16_exact(b):
        return "bfloat16"
    if a.dtype == np.uint8:
        return "float8_e4m3fn"
    return a.dtype.name


def make_builder(ledger_of: Callable[[], Ledger | None]) -> Any:
    """A counting builder instance; `ledger_of()` gives the ledger of the call being measured
    (None outside a measured call: then nothing is counted)."""

    def work(unit: str, dtype: str | None, flops: int) -> None:
        led = ledger_of()
        if led is not None and dtype is not None:
            led.count_work(unit, dtype, flops)

    class CountingBuilder(interp.InterpreterBuilder):
        def create_masked_load(self, ptrs, mask, other, cache_policy, is_volatile):
            elt = ptrs.get_element_ty()
            led = ledger_of()
            if led is not None:
                led.count_load(_active(ptrs, mask), _elem_size(elt))
            if elt == tl.bfloat16:
                ret = super().create_masked_load(
                    ptrs, mask, _bits(other), cache_policy, is_volatile
                )
                return _shadow(ret)
            return super().create_masked_load(ptrs, mask, other, cache_policy, is_volatile)

        def create_masked_store(self, ptrs, value, mask, cache_policy):
            elt = ptrs.get_element_ty()
            led = ledger_of()
            if led is not None:
                led.count_store(_active(ptrs, mask), _elem_size(elt))
            if elt == tl.bfloat16:
                value = _bits(value)
            return super().create_masked_store(ptrs, value, mask, cache_policy)

        def create_atomic_rmw(self, rmwOp, ptr, val, mask, sem, scope):
            led = ledger_of()
            if led is not None:
                size = _elem_size(ptr.get_element_ty())
                led.count_load(_active(ptr, mask), size)
                led.count_store(_active(ptr, mask), size)
            return super().create_atomic_rmw(rmwOp, ptr, val, mask, sem, scope)

        def create_atomic_cas(self, ptr, cmp, val, sem, scope):
            led = ledger_of()
            if led is not None:
                size = _elem_size(ptr.get_element_ty())
                led.count_load(ptr.data.ravel(), size)
                led.count_store(ptr.data.ravel(), size)
            return super().create_atomic_cas(ptr, cmp, val, sem, scope)

        # -- arithmetic (vector unit) -----------------------------------------------------
        def binary_op(self, lhs, rhs, op):
            out = super().binary_op(lhs, rhs, op)
            work(
                "vector",
                _float_dtype(out.data, lhs.data, rhs.data),
                out.data.size * _BINARY_WEIGHT.get(op, 1),
            )
            return out

        def unary_op(self, arg, op):
            out = super().unary_op(arg, op)
            work("vector", _float_dtype(out.data), out.data.size * _UNARY_WEIGHT.get(op, 1))
            return out

        def ternary_op(self, lhs, rhs, other, op):
            out = super().ternary_op(lhs, rhs, other, op)
            work("vector", _float_dtype(out.data), out.data.size)
            return out

        def create_fma(self, x, y, z):
            out = super().create_fma(x, y, z)
            work("vector", _float_dtype(out.data), 2 * out.data.size)
            return out

        def create_erf(self, arg):
            out = super().create_erf(arg)
            work("vector", _float_dtype(out.data), TRANSCENDENTAL * out.data.size)
            return out

        def create_rsqrt(self, arg):
            out = super().create_rsqrt(arg)
            work("vector", _float_dtype(out.data), TRANSCENDENTAL * out.data.size)
            return out

        def create_fabs(self, arg):
            out = super().create_fabs(arg)
            work("vector", _float_dtype(out.data), out.data.size)
            return out

        # -- dot (matrix unit) --------------------------------------------------------------
        def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
            out = super().create_dot(a, b, d, input_precision, max_num_imprecise_acc)
            k = a.data.shape[-1]
            work("tensor", _dot_dtype(a.data, b.data), 2 * out.data.size * k)
            return out

        # -- casts and bf16 -----------------------------------------------------------------
        def cast_impl(self, src, dst_type):
            dst = dst_type.scalar
            if src.dtype.scalar == tl.bfloat16 and src.data.dtype == np.uint16:
                src = _shadow(src)
            if _is_float(src.data):
                work("vector", src.data.dtype.name, src.data.size)
            if dst == tl.bfloat16:
                wide = src.data.astype(np.float32)
                out = interp.TensorHandle(bf16.round_f32(wide), tl.float32)
                out.set_attr(BF16_FLAG, True)
                return out
            return super().cast_impl(src, dst_type)

        def create_fp_to_fp(self, src, dst_type, rounding_mode):
            bf = tl.bfloat16
            if src.dtype.scalar == bf or dst_type.scalar == bf or src.data.dtype == np.float32:
                if src.dtype.scalar.primitive_bitwidth == 8:
                    src = super().create_fp_to_fp(src, tl.float32, rounding_mode)
                if dst_type.scalar.primitive_bitwidth == 8:
                    return super().create_fp_to_fp(src, dst_type, rounding_mode)
                return self.cast_impl(src, dst_type)
            return super().create_fp_to_fp(src, dst_type, rounding_mode)

        def create_bitcast(self, src, dst_type):
            dst = dst_type.scalar
            if src.data.dtype == np.float32 and dst.primitive_bitwidth == 16:
                src = _bits(src)
            out = super().create_bitcast(src, dst_type)
            return _shadow(out) if dst == tl.bfloat16 else out

        def get_null_value(self, type):
            if type.scalar == tl.bfloat16:
                return interp.TensorHandle(np.zeros(1, dtype=np.float32), tl.float32)
            return super().get_null_value(type)

    return CountingBuilder()


def count_reduction(ledger_of: Callable[[], Ledger | None], data: np.ndarray, weight: int) -> None:
    """Count a fast-path reduction or scan over `data` (one op per input element)."""
    led = ledger_of()
    if led is not None and _is_float(data):
        led.count_work("vector", data.dtype.name, weight * data.size)


def reduce_to_tensor(original: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap the interpreter's reduction result packing so bf16 results stay float32 shadows."""

    def to_tensor(self, ret, dtype):
        if dtype == tl.bfloat16 or getattr(dtype, "scalar", None) == tl.bfloat16:
            arr = np.asarray(ret, dtype=np.float32)
            shaped = arr.shape != ()
            data = bf16.round_f32(arr if shaped else arr.reshape(1))
            ty = tl.block_type(tl.bfloat16, list(arr.shape)) if shaped else tl.bfloat16
            return tl.core.tensor(interp.TensorHandle(data, tl.float32), ty)
        return original(self, ret, dtype)

    return to_tensor
