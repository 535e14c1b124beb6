"""The problem format as Python objects. Problems are data: see docs/problem-format.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from farm.suite import formulas

# Element sizes in bytes, by the dtype names problem files use (torch's names). An element of
# float4_e2m1fn_x2 is one byte holding two fp4 values (torch's packed fp4 dtype); float8_e8m0fnu
# is the exponent-only scale format of MX block scaling.
DTYPE_SIZES: dict[str, int] = {
    "float64": 8,
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1,
    "float8_e8m0fnu": 1,
    "float4_e2m1fn_x2": 1,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "int8": 1,
    "uint64": 8,
    "uint32": 4,
    "uint16": 2,
    "uint8": 1,
    "bool": 1,
}
LOW_PRECISION_FLOATS = {
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float4_e2m1fn_x2",
}
FLOAT_DTYPES = {"float64", "float32", "float16", "bfloat16"} | LOW_PRECISION_FLOATS

CATEGORIES = (
    "elementwise",
    "activation",
    "reduction",
    "normalization",
    "softmax",
    "loss",
    "gemm",
    "attention",
    "convolution",
    "pooling",
    "embedding",
    "scan",
    "topk",
    "quantization",
    "fused",
)
LANGUAGES = ("pytorch", "triton", "cuda", "hip")
COMPUTE_UNITS = ("vector", "tensor")
PASSES = ("forward", "backward")


@dataclass(frozen=True)
class TensorSpec:
    """One input or output: its shape in axis names (or ints/expressions) and its dtype.

    `dtype` None means "the workload's dtype".
    """

    name: str
    shape: tuple[str | int, ...]
    dtype: str | None = None

    def resolved_dtype(self, workload_dtype: str) -> str:
        return self.dtype or workload_dtype

    def resolved_shape(self, axes: dict[str, int]) -> tuple[int, ...]:
        return tuple(int(formulas.evaluate(d, axes)) for d in self.shape)

    def nbytes(self, axes: dict[str, int], workload_dtype: str, *, widest: int = 1) -> int:
        """Bytes of the tensor, each element counted at `widest` bytes when it is narrower."""
        n = 1
        for d in self.resolved_shape(axes):
            n *= d
        return n * max(widest, DTYPE_SIZES[self.resolved_dtype(workload_dtype)])


@dataclass(frozen=True)
class Tolerance:
    """Per element: |out - ref| <= atol + rtol * |ref| must hold for every element.

    norm_rtol, when set: the normwise relative error ||out - ref||_2 / ||ref||_2 must not exceed
    it. An honest in-dtype chain errs by several ulp only on small elements, which weigh little
    in the norm; a lower-precision format (fp8 storage, fp16 inputs) errs on every element, the
    large ones included. Values are calibrated by bench/calibrate_tolerances.py
    (docs/tolerances.md)."""

    atol: float
    rtol: float
    norm_rtol: float | None = None


@dataclass(frozen=True)
class Invariant:
    """A property every correct output has, checked on the candidate's output itself (so it
    holds however the reference rounds): `sum` — the sum over `dim` equals `value` within
    `tolerance[dtype]` (softmax rows sum to 1); `bounds` — every element lies in
    [low, high] (probabilities in [0, 1]), with `tolerance[dtype]` of slack."""

    kind: str  # "sum" | "bounds"
    output: int  # index of the output it applies to
    tolerance: dict[str, float]
    dim: int = -1
    value: float = 0.0
    low: float = float("-inf")
    high: float = float("inf")


@dataclass(frozen=True)
class Workload:
    """One concrete shape of a problem, usually taken from a named real model."""

    id: str
    axes: dict[str, int]
    dtype: str
    model: str | None = None
    source: str | None = None
    small: bool = False  # small enough for the simulated NPU (about a second)
    scaled_from: str | None = None  # the workload this is a scaled-down copy of (importers)

    def variables(self) -> dict[str, float]:
        return {**self.axes, "E": DTYPE_SIZES[self.dtype]}


@dataclass(frozen=True)
class Problem:
    """A problem of a suite: metadata from problem.yaml plus the path of reference.py."""

    name: str
    category: str
    description: str
    signature: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    dtypes: tuple[str, ...]
    tolerance: dict[str, Tolerance]
    flops: str
    compute_unit: str
    bytes: str  # an expression, or "io": every input read once and every output written once
    workloads: tuple[Workload, ...]
    languages: tuple[str, ...] = LANGUAGES
    pass_: str = "forward"
    requires: tuple[str, ...] = ()  # hardware features, e.g. "fp8"
    invariants: tuple[Invariant, ...] = ()
    directory: Path = field(default=Path("."), compare=False)
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def reference_path(self) -> Path:
        return self.directory / "reference.py"

    def workload(self, workload_id: str) -> Workload:
        for w in self.workloads:
            if w.id == workload_id:
                return w
        from farm.errors import unknown

        raise unknown("workload", workload_id, [w.id for w in self.workloads], self.name)

    def input_tensors(self) -> int:
        """The most input tensors one call may have: the inputs listed, or, for imported data
        listed per dtype (`extra.input_tensors`), the count it records."""
        return int(self.extra.get("input_tensors", 0)) or len(self.inputs) or 1 << 10

    def flop_count(self, w: Workload) -> float:
        """FLOPs of one call on workload `w`."""
        return formulas.evaluate(self.flops, w.variables())

    def io_bytes(self, w: Workload, *, widest: int = 1) -> int:
        """Bytes of every input plus every output tensor of `w` (elements narrower than
        `widest` bytes counted at `widest`)."""
        return sum(s.nbytes(w.axes, w.dtype, widest=widest) for s in (*self.inputs, *self.outputs))

    def state_bytes(self, w: Workload) -> int:
        """Bytes of the reference module's parameters and buffers on `w`, which a candidate
        built like it holds too (importers of module problems record them in
        `extra.state_bytes`, per workload id; 0 for functions)."""
        recorded = self.extra.get("state_bytes")
        return int(recorded.get(w.id, 0)) if isinstance(recorded, dict) else 0

    def device_bytes(self, w: Workload) -> int:
        """What a run of `w` holds on the device at least: its inputs, outputs and weights (the
        measure of a GPU worker's memory limits)."""
        return self.io_bytes(w) + self.state_bytes(w)

    def host_bytes(self, w: Workload) -> int:
        """`device_bytes` with every tensor narrower than 4 bytes counted at float32 width: what
        an honest kernel computing in float32 over bf16/fp16/fp8 data holds in host memory at
        once (its intermediates), the measure of a CPU or npu-sim worker's memory limit."""
        return self.io_bytes(w, widest=4) + self.state_bytes(w)

    def compulsory_bytes(self, w: Workload) -> float:
        """Fewest bytes one call must move through device memory on workload `w`."""
        if self.bytes == "io":
            return float(self.io_bytes(w))
        return formulas.evaluate(self.bytes, w.variables())

    def workload_summary(self, w: Workload) -> dict[str, Any]:
        """A workload as JSON, with its FLOPs and compulsory bytes (what the server stores and
        `farm problems show --json` prints)."""
        return {
            "id": w.id,
            "axes": w.axes,
            "dtype": w.dtype,
            "model": w.model,
            "small": w.small,
            "flops": self.flop_count(w),
            "bytes": self.compulsory_bytes(w),
        }

    def size_note(self) -> str | None:
        """Which workloads cpu and npu-sim leave out, and why: outside leaderboard runs they run
        only the small ones (farm.harness.targets). None when every workload is small."""
        large = [w.id for w in self.workloads if not w.small]
        if not large:
            return None
        small = [w for w in self.workloads if w.small]
        if not small:
            why = self.extra.get("not_small", "it has no small workload")
            return (
                f"cpu and npu-sim run none of its workloads ({why}); they run on GPUs and in "
                "npu-sim leaderboard runs"
            )
        copies = "".join(
            f"; {w.id} is {w.scaled_from} scaled down to the npu-sim size rule, and a verdict "
            f"on it is that size's, not {w.scaled_from}'s"
            for w in small
            if w.scaled_from
        )
        return (
            f"cpu and npu-sim run only the small workloads ({', '.join(w.id for w in small)}); "
            f"the others ({', '.join(large)}) run on GPUs and in npu-sim leaderboard runs{copies}"
        )

    def tolerance_for(self, dtype: str) -> Tolerance:
        return self.tolerance[dtype]
