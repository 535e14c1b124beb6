"""bfloat16 under the Triton interpreter.

The interpreter keeps bf16 values as raw uint16 bit patterns and has no bf16 arithmetic: a
bf16 `a + b` adds the bit patterns as integers. npu-sim therefore carries every bf16 value as a
float32 "shadow" holding exactly the bf16 value: loads widen the bits, casts to bf16 round to
nearest-even and stay in float32, and stores narrow back to bf16 bits. Arithmetic between casts
runs in float32 (as GPU compilers do for most bf16 elementwise code). Bytes are counted at the
pointer's element size (2 bytes), so the memory cost is that of bf16.
"""

from __future__ import annotations

import numpy as np


def bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """bf16 bit patterns (uint16) -> the same values as float32."""
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bit patterns (uint16), rounding to nearest even; NaN stays NaN."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = ((bits + np.uint32(0x7FFF) + lsb) >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(x)
    if nan.any():
        rounded = np.where(
            nan, ((bits >> np.uint32(16)) | np.uint32(0x40)).astype(np.uint16), rounded
        )
    return rounded


def round_f32(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bf16 value, still as float32."""
    return bits_to_f32(f32_to_bits(x))


def is_bf16_exact(x: np.ndarray) -> bool:
    """Whether every float32 value in `x` is exactly a bf16 value (low 16 bits all zero)."""
    if x.dtype != np.float32:
        return False
    return not (np.ascontiguousarray(x).view(np.uint32) & np.uint32(0xFFFF)).any()
