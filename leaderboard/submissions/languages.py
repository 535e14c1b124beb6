"""Which language a kernel file is written in, when the submitter does not say."""

from __future__ import annotations

import re

_HIP = re.compile(r"hip_runtime|hipLaunchKernelGGL|__HIP_PLATFORM|hipStream_t|\bhip\.h\b")
_TRITON = re.compile(r"^\s*(import triton|from triton\b)|@triton\.jit", re.MULTILINE)


def language_detect(source: str) -> str:
    """cuda | hip (load_inline with CUDA or HIP code), triton, else pytorch."""
    if "load_inline" in source or "cpp_extension" in source:
        return "hip" if _HIP.search(source) else "cuda"
    if _TRITON.search(source):
        return "triton"
    return "pytorch"
