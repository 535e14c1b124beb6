"""Speed-of-light (SOL) bounds: the fastest any kernel could run a workload on a hardware class.

T_SOL = max(FLOPs / peak[dtype, unit], compulsory bytes / bandwidth) + launch floor, with FLOPs
and bytes from the problem's formulas and the peak, bandwidth and launch floor from
`farm.hardware.specs`. It is a roofline bound: no kernel that does the problem's work and moves
its compulsory bytes through device memory can be faster, so a measured time below it (times a
small slack, `farm.scoring`) is impossible. The launch floor is 0 on GPUs; on npu-sim it is what
the cost model charges the least kernel (one launch of one program), so the bound and the
simulated times count the same things. See docs/hardware.md.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from farm.hardware.specs import HardwareSpec, UnsupportedPrecisionError
from farm.suite.model import DTYPE_SIZES

if TYPE_CHECKING:
    from farm.suite.loader import Suite
    from farm.suite.model import Problem, Workload

# Integer and bool workloads: integer arithmetic runs on the vector ALUs; we use the int32 rate
# (or the float32 rate where no int32 rate is listed, which on GPUs is at least as fast), so the
# bound stays a lower bound. Such problems are nearly always memory-bound anyway.
_INTEGER_DTYPES = {"int64", "int32", "int16", "int8", "uint8", "bool"}


class UnsupportedWorkload(Exception):
    """The hardware cannot run this workload (a required feature or dtype path is missing)."""


@dataclass(frozen=True)
class SolBound:
    """The SOL bound of one workload on one hardware class.

    Times in ms; `flops` in FLOP, `bytes` in bytes, `peak_flops` in FLOP/s, `bandwidth` in
    bytes/s. time_ms = max(compute_ms, memory_ms) + overhead_ms (the class's launch floor);
    `bound` names the largest of the three terms.
    """

    time_ms: float
    compute_ms: float
    memory_ms: float
    flops: float
    bytes: float
    bound: Literal["compute", "memory", "overhead"]
    peak_flops: float
    bandwidth: float
    overhead_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compute_dtype(problem: Problem, workload: Workload) -> str:
    """The dtype whose peak bounds `workload`: what the arithmetic runs in, not the output.

    `extra: {compute_dtype: X}` in problem.yaml decides when present. On the tensor unit it is
    the widest dtype among the matrix operands (inputs of rank >= 2): an MMA takes both operands
    in one format, so fp8 x fp8 runs at the fp8 rate even when the output (the workload dtype)
    is bfloat16, and bf16 x int8 weights run at the bf16 rate. Small inputs such as per-tensor
    scales are not operands. Otherwise, and on the vector unit, the workload dtype.
    """
    override = problem.extra.get("compute_dtype")
    if isinstance(override, str):
        return override
    if problem.compute_unit == "tensor":
        operands = [t.resolved_dtype(workload.dtype) for t in problem.inputs if len(t.shape) >= 2]
        operands = [d for d in operands if d in DTYPE_SIZES and d != "bool"]
        if operands:
            return max(operands, key=lambda d: DTYPE_SIZES[d])
    return workload.dtype


def peak_dtype(dtype: str, unit: str) -> str:
    """The dtype to look a peak up by: integer and bool dtypes use int32 (module notes)."""
    if dtype in _INTEGER_DTYPES and not (dtype == "int8" and unit == "tensor"):
        return "int32"
    return dtype


def missing_features(problem: Problem, spec: HardwareSpec) -> list[str]:
    """Hardware features `problem` requires that `spec` lacks (empty when it can run)."""
    return [f for f in problem.requires if f not in spec.features]


def sol_bound(problem: Problem, workload: Workload, spec: HardwareSpec) -> SolBound:
    """T_SOL of `workload` of `problem` on `spec`.

    The peak is that of `compute_dtype` (usually the workload's dtype; fp8 GEMMs use the fp8
    tensor peak) on the problem's `compute_unit`; float32 on the tensor unit is the TF32 path
    where there is one; integer dtypes see `peak_dtype`. Raises UnsupportedWorkload when the problem
    requires a feature the hardware lacks or the hardware has no path for the dtype.
    """
    lacking = missing_features(problem, spec)
    if lacking:
        raise UnsupportedWorkload(f"{spec.name} lacks {', '.join(lacking)} ({problem.name})")
    unit = problem.compute_unit
    try:
        peak = spec.peak(peak_dtype(compute_dtype(problem, workload), unit), unit)
    except UnsupportedPrecisionError as exc:
        raise UnsupportedWorkload(str(exc)) from exc
    flops = float(problem.flop_count(workload))
    nbytes = float(problem.compulsory_bytes(workload))
    return bound_from_counts(flops, nbytes, peak, spec.memory_bandwidth, spec.launch_floor_s)


def floor_ms(problem: Problem, workload: Workload, spec: HardwareSpec) -> float:
    """A floor for rejecting impossible times (ms): T_SOL without output bytes the LLC can hold.

    T_SOL counts every output byte as written to device memory, but the last-level cache is
    write-back: a kernel can finish while up to `spec.llc_bytes` of its output is still in the
    cache. A plausibility check that rejects times must not reject such an honest kernel, so it
    compares against this floor; scores use `sol_bound`. Raises UnsupportedWorkload as
    `sol_bound` does.
    """
    b = sol_bound(problem, workload, spec)
    out_bytes = sum(s.nbytes(workload.axes, workload.dtype) for s in problem.outputs)
    held = min(out_bytes, spec.llc_bytes, b.bytes)
    return max(b.compute_ms, (b.bytes - held) / b.bandwidth * 1e3) + b.overhead_ms


def bound_from_counts(
    flops: float, nbytes: float, peak: float, bandwidth: float, launch_floor_s: float = 0.0
) -> SolBound:
    """The roofline bound of `flops` FLOP and `nbytes` bytes at `peak` FLOP/s, `bandwidth` B/s,
    plus `launch_floor_s` seconds that any kernel takes (HardwareSpec.launch_floor_s)."""
    if not (math.isfinite(flops) and math.isfinite(nbytes)) or flops < 0 or nbytes < 0:
        raise ValueError(f"FLOPs and bytes must be finite and >= 0, got {flops}, {nbytes}")
    compute_ms = flops / peak * 1e3
    memory_ms = nbytes / bandwidth * 1e3
    overhead_ms = launch_floor_s * 1e3
    bound: Literal["compute", "memory", "overhead"] = (
        "compute" if compute_ms > memory_ms else "memory"
    )
    if overhead_ms > max(compute_ms, memory_ms):
        bound = "overhead"
    return SolBound(
        time_ms=max(compute_ms, memory_ms) + overhead_ms,
        compute_ms=compute_ms,
        memory_ms=memory_ms,
        flops=flops,
        bytes=nbytes,
        bound=bound,
        peak_flops=peak,
        bandwidth=bandwidth,
        overhead_ms=overhead_ms,
    )


def sol_table(suite: Suite, spec: HardwareSpec) -> list[dict[str, Any]]:
    """One row per (problem, workload) of `suite` on `spec`.

    Each row has problem, workload, dtype, unit, and either `supported: True` with flops, bytes,
    bound, sol_ms, compute_ms, memory_ms, or `supported: False` with `reason`.
    """
    rows = []
    for problem in suite.problems.values():
        for workload in problem.workloads:
            rows.append(_row(problem, workload, spec))
    return rows


def _row(problem: Problem, workload: Workload, spec: HardwareSpec) -> dict[str, Any]:
    row: dict[str, Any] = {
        "problem": problem.name,
        "workload": workload.id,
        "dtype": workload.dtype,
        "compute_dtype": compute_dtype(problem, workload),
        "unit": problem.compute_unit,
    }
    try:
        b = sol_bound(problem, workload, spec)
    except UnsupportedWorkload as exc:
        return {**row, "supported": False, "reason": str(exc)}
    return {
        **row,
        "supported": True,
        "flops": b.flops,
        "bytes": b.bytes,
        "bound": b.bound,
        "sol_ms": b.time_ms,
        "compute_ms": b.compute_ms,
        "memory_ms": b.memory_ms,
        "overhead_ms": b.overhead_ms,
    }
