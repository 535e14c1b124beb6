"""The problem format as Python objects. Problems are data: see docs/problem-format.md."""

from __future__ import annotations

from collections.abc import Iterable
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

# cpu runs a source workload that was scaled down for the npu-sim rule when its host bytes
# (Problem.host_bytes: inputs, outputs and weights at float32 width) fit this: a verdict at the
# scaled size can differ from the source size's (an unbiased-variance InstanceNorm fails at
# 16x16 and passes at 512x512), and a host holds far more than the simulator's size rule
CPU_SOURCE_BYTES = 256 << 20

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

    def cpu_workloads(self) -> tuple[Workload, ...]:
        """What cpu runs when no workload is named: the small workloads, and each workload a
        small copy was scaled from whose host bytes fit CPU_SOURCE_BYTES (a verdict on the copy
        is that size's, and can differ from the source size's)."""
        sources = {w.scaled_from for w in self.workloads if w.small and w.scaled_from}
        return tuple(
            w for w in self.workloads if w.small or (w.id in sources and self._cpu_holds(w))
        )

    def _cpu_holds(self, w: Workload) -> bool:
        try:
            return self.host_bytes(w) <= CPU_SOURCE_BYTES
        except (KeyError, ValueError, TypeError, ArithmeticError):  # a shape it cannot size
            return False

    def size_note(self) -> str | None:
        """Which workloads cpu and npu-sim leave out, and why (farm.harness.targets: outside
        leaderboard runs npu-sim runs the small ones, cpu the cpu_workloads). None when every
        workload is small."""
        large = [w for w in self.workloads if not w.small]
        if not large:
            return None
        small = [w for w in self.workloads if w.small]
        if not small:
            why = self.extra.get("not_small", "it has no small workload")
            return (
                f"cpu and npu-sim run none of its workloads ({why}); they run on GPUs and in "
                "npu-sim leaderboard runs"
            )
        cpu = [w.id for w in self.cpu_workloads()]
        others = _ids(w for w in large if w.id not in cpu)
        if len(cpu) == len(small):
            note = (
                f"cpu and npu-sim run only the small workloads ({_ids(small)}); the others "
                f"({others}) run on GPUs and in npu-sim leaderboard runs"
            )
        elif len(cpu) == len(self.workloads):
            note = (
                f"npu-sim runs only the small workloads ({_ids(small)}) outside leaderboard "
                "runs; cpu and GPUs run every workload"
            )
        else:
            note = (
                f"npu-sim runs only the small workloads ({_ids(small)}), cpu those and the "
                f"source sizes it holds ({', '.join(cpu)}); the others ({others}) run on GPUs "
                "and in npu-sim leaderboard runs"
            )
        return note + "".join(self._copy_note(w, cpu) for w in small if w.scaled_from)

    def _copy_note(self, w: Workload, cpu: list[str]) -> str:
        source = self.workload(str(w.scaled_from))
        note = f"; {w.id} is {source.id} scaled down to the npu-sim size rule, and a verdict on it "
        if source.id in cpu:
            return note + f"is that size's, so cpu runs {source.id} too"
        try:
            held = f"{self.host_bytes(source) / 2**20:.0f} MiB at float32 width"
        except (KeyError, ValueError, TypeError, ArithmeticError):
            held = "a size it cannot count"
        return note + (
            f"is that size's, not {source.id}'s (cpu does not run {source.id}: {held}, over "
            f"the {CPU_SOURCE_BYTES >> 20} MiB it holds)"
        )

    def size_statement(self, ran: Iterable[str]) -> str | None:
        """What a result on this problem ran and which of its workloads it did not, with the
        size note saying why: `ran: small; not run: source (...)`. `ran` are the ids of the
        result's workloads that were not skipped (ids not of this problem, such as secret
        workloads, are left out). None when it ran none of them."""
        done = set(ran)
        ids = [w.id for w in self.workloads if w.id in done]
        if not ids:
            return None
        left = [w.id for w in self.workloads if w.id not in done]
        if not left:
            return f"ran: {', '.join(ids)} (every workload of the problem)"
        note = self.size_note()
        why = f" ({note})" if note else ""
        return f"ran: {', '.join(ids)}; not run: {', '.join(left)}{why}"

    def tolerance_for(self, dtype: str) -> Tolerance:
        return self.tolerance[dtype]


def _ids(workloads: Iterable[Workload]) -> str:
    return ", ".join(w.id for w in workloads)
