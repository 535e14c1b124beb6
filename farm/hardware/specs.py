"""Hardware classes and their peak figures: what speed-of-light bounds are computed against.

Every figure is per device and dense (no 2:4 structured sparsity). NVIDIA's H100, H200 and B200
sheets print tensor rates *with* sparsity, so those are halved; AMD prints dense and sparse side
by side. Source keys (A1, H1, M2, ...) are those of docs/reference/hardware-specs.md, which also
records where other projects' tables go wrong; docs/hardware.md has the table and the reasoning.

Units: peaks in FLOP/s (OP/s for int8), bandwidth in bytes/s, sizes in bytes, clocks in MHz.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from farm.errors import FarmError, UnknownNameError, unknown
from farm.hardware.npu_sim.spec import NPU_SIM_V1, NpuSimSpec

Unit = Literal["vector", "tensor"]
UNITS: tuple[str, ...] = ("vector", "tensor")

_T = 1e12  # TFLOP/s -> FLOP/s
_TB = 1e12  # TB/s -> bytes/s (vendors use decimal terabytes for bandwidth)
_GIB = 2**30  # vendors' "80 GB" of HBM is 80 GiB (nvidia-smi and amd-smi report MiB)
_MIB = 2**20  # cache sizes: "50 MB L2" is 50 MiB (cudaDeviceProp.l2CacheSize = 52428800)

# dtype names that share a rate with a listed one (same hardware path, different encoding).
_ALIASES = {
    "float16": "bfloat16",  # fp16 and bf16 run at one rate on every part here
    "half": "bfloat16",
    "float8_e5m2": "float8_e4m3fn",
    "float8_e4m3fnuz": "float8_e4m3fn",  # AMD MI300's fp8 encodings (torch names)
    "float8_e5m2fnuz": "float8_e4m3fn",
    "float8_e8m0fnu": "float8_e4m3fn",  # MX scale format (no arithmetic of its own)
    "float4_e2m1fn_x2": "float4",  # torch's packed fp4 dtype
    "float": "float32",
    "double": "float64",
}
_INTEGER = {"int64", "int32", "int16", "int8", "uint8", "bool"}
_NARROW_FLOAT = {"bfloat16", "float8_e4m3fn", "float4"}


class UnsupportedPrecisionError(FarmError):
    """The hardware has no path for this (dtype, unit): e.g. fp8 tensor cores on an A100."""


class UnsupportedHardwareError(FarmError):
    """A real device the farm recognises but has no class for (e.g. an H100 PCIe card)."""


@dataclass(frozen=True)
class HardwareSpec:
    """One hardware class. `peaks` maps (dtype, unit) to dense FLOP/s; see `peak()`."""

    name: str
    vendor: Literal["nvidia", "amd", "npu-sim"]
    device: Literal["cuda", "rocm", "npu-sim"]
    marketing_name: str
    peaks: MappingProxyType[tuple[str, str], float] = field(hash=False)  # FLOP/s
    memory_bandwidth: float  # bytes/s
    memory_bytes: int
    llc_bytes: int  # the last-level cache an L2 flush must exceed (NVIDIA L2, AMD Infinity Cache)
    compute_units: int  # SMs (NVIDIA), CUs (AMD), cores (npu-sim)
    max_clock_mhz: float
    features: frozenset[str] = field(default_factory=frozenset)
    sources: tuple[str, ...] = ()
    # The least time (s) any kernel takes on this class, however little it does: what npu-sim's
    # cost model charges every launch (its overhead and one program instance's), so its SOL bound
    # includes it (farm.sol). 0 on GPUs: their launch latency varies with the host and is not
    # the kernel's (events time the kernel from its start on the device).
    launch_floor_s: float = 0.0

    def peak(self, dtype: str, unit: str) -> float:
        """Peak FLOP/s of `dtype` on `unit` ("vector" or "tensor"), with these fallbacks.

        - A listed (dtype, unit) is used as is. Otherwise float16 uses the bfloat16 rate, every
          fp8 encoding the float8_e4m3fn rate, torch's packed fp4 dtype the float4 rate (one
          hardware path each on every part here).
        - float32 on "tensor" is the fastest tensor path that takes fp32 inputs: TF32 where the
          hardware has it (NVIDIA, MI300X/MI325X), else native fp32 matrix (MI355X, npu-sim).
          A lower bound must allow the fastest path a kernel may legally take.
        - On "vector", integer and bool dtypes use the int32 rate, or the float32 rate where no
          int32 rate is listed; 16-bit floats without a listed rate use twice the float32 rate
          (packed pairs per 32-bit lane: half2/bf16x2 on NVIDIA, packed FP16 on CDNA); fp8/fp4
          vector arithmetic is done after widening, so it uses the 16-bit rule.
        Raises UnsupportedPrecisionError when the hardware has no path for the combination.
        """
        if unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
        found = self._lookup(dtype, unit)
        if found is None:
            raise UnsupportedPrecisionError(
                f"{self.name} has no {unit} path for {dtype}",
                hint=f"it has: {', '.join(self.listed())}",
            )
        return found

    def supports(self, dtype: str, unit: str) -> bool:
        """True when `peak(dtype, unit)` has an answer."""
        return self._lookup(dtype, unit) is not None

    def listed(self) -> list[str]:
        """The (dtype, unit) pairs in the table, as "dtype/unit" strings."""
        return [f"{d}/{u}" for d, u in self.peaks]

    def _lookup(self, dtype: str, unit: str) -> float | None:
        if unit == "tensor" and dtype == "float32":
            paths = [self.peaks.get(("tfloat32", unit)), self.peaks.get(("float32", unit))]
            return max((p for p in paths if p), default=None)
        if (dtype, unit) in self.peaks:
            return self.peaks[dtype, unit]
        dtype = _ALIASES.get(dtype, dtype)
        if (dtype, unit) in self.peaks:
            return self.peaks[dtype, unit]
        if unit != "vector":
            return None
        fp32 = self.peaks.get(("float32", "vector"))
        if dtype in _INTEGER:
            return self.peaks.get(("int32", "vector"), fp32)
        if dtype in _NARROW_FLOAT and fp32:
            return self.peaks.get(("bfloat16", "vector"), 2 * fp32)
        return None

    def ridge_point(self, dtype: str = "bfloat16") -> float:
        """FLOP per byte of HBM traffic where the tensor peak and the bandwidth meet."""
        return self.peak(dtype, "tensor") / self.memory_bandwidth


def _peaks(table: dict[tuple[str, str], float]) -> MappingProxyType[tuple[str, str], float]:
    return MappingProxyType({k: v * _T for k, v in table.items()})


# Peaks below are in TFLOP/s; `_peaks` converts. V = vector (SIMT / non-matrix), X = tensor.
V, X = "vector", "tensor"

NVIDIA_A100 = HardwareSpec(
    name="nvidia-a100",
    vendor="nvidia",
    device="cuda",
    marketing_name="NVIDIA A100-SXM4-80GB",
    peaks=_peaks(
        {
            ("float64", V): 9.7,  # A1: datasheet; 108 SM x 64 FLOP/clk x 1.41 GHz = 9.75
            ("float64", X): 19.5,  # A1
            ("float32", V): 19.5,  # A1; 108 x 128 x 1.41 = 19.49
            ("tfloat32", X): 156.0,  # A1: 312 sparse / 2
            ("bfloat16", X): 312.0,  # A1: 624 sparse / 2; 1.41 GHz x 2048 x 108 = 311.9
            ("int8", X): 624.0,  # A1: 1248 TOPS sparse / 2
        }
    ),
    # A1: 2.039 TB/s is the SXM4 80 GB part. KernelBench's "A100-80GB" 1935 GB/s is the PCIe
    # card; tritonbench keys its A100 to the 40 GB part (1.555 TB/s).
    memory_bandwidth=2.039 * _TB,
    memory_bytes=80 * _GIB,
    llc_bytes=40 * _MIB,  # A2: 40 MB L2
    compute_units=108,  # A2
    max_clock_mhz=1410,  # A1 boost
    features=frozenset({"tf32", "bf16", "int8", "fp64-tensor"}),
    sources=("A1", "A2"),
)

_HOPPER_PEAKS = _peaks(
    {
        ("float64", V): 34.0,  # H1: 34; 132 SM x 128 FLOP/clk x 1.98 GHz = 33.5
        ("float64", X): 67.0,  # H1
        # H1: 67 = 132 x 256 x 1.98 GHz. tritonbench's 494 "fp32" is the TF32 tensor rate.
        ("float32", V): 67.0,
        ("tfloat32", X): 494.7,  # H1: 989 sparse / 2
        ("bfloat16", X): 989.4,  # H1: 1979 sparse / 2; 1.83 GHz x 4096 x 132 = 989.4 (S)
        ("float8_e4m3fn", X): 1978.9,  # H1: 3958 sparse / 2
        ("int8", X): 1978.9,  # H1: 3958 TOPS sparse / 2
    }
)
_HOPPER_FEATURES = frozenset(
    {"tf32", "bf16", "int8", "fp64-tensor", "fp8", "fp8-ocp", "wgmma", "tma"}
)

NVIDIA_H100 = HardwareSpec(
    name="nvidia-h100",
    vendor="nvidia",
    device="cuda",
    marketing_name="NVIDIA H100-SXM5-80GB",
    peaks=_HOPPER_PEAKS,
    # H1: SXM5 3.35 TB/s. tritonbench's 2000 GB/s (and MEMORY_FREQ_LIMIT 1593 MHz, as in
    # SOL-ExecBench's device_config) is the PCIe card.
    memory_bandwidth=3.35 * _TB,
    memory_bytes=80 * _GIB,
    llc_bytes=50 * _MIB,  # H2: 50 MB L2
    compute_units=132,  # H2
    max_clock_mhz=1980,  # H1 max SM clock; tensor peaks assume 1830 (S)
    features=_HOPPER_FEATURES,
    sources=("H1", "H2", "S"),
)

NVIDIA_H200 = HardwareSpec(
    name="nvidia-h200",
    vendor="nvidia",
    device="cuda",
    marketing_name="NVIDIA H200-SXM-141GB",
    peaks=_HOPPER_PEAKS,  # H3: same GH100 compute as H100 SXM5
    memory_bandwidth=4.8 * _TB,  # H3
    memory_bytes=141 * _GIB,  # H3: 141 GB HBM3e
    llc_bytes=50 * _MIB,  # H3/H2
    compute_units=132,
    max_clock_mhz=1980,
    features=_HOPPER_FEATURES,
    sources=("H3", "H2", "S"),
)

NVIDIA_B200 = HardwareSpec(
    name="nvidia-b200",
    vendor="nvidia",
    device="cuda",
    marketing_name="NVIDIA B200 (HGX, 1000 W)",
    # tritonbench's NV_B200 is a copy of its H100 numbers (a TODO); SOLAR's B200.yaml assumes
    # 1.5 GHz and comes out about 20 % low. These are NVIDIA's own per-GPU figures.
    peaks=_peaks(
        {
            ("float64", V): 37.0,  # B1 (an earlier sheet, B2, says 40)
            ("float64", X): 37.0,  # B1
            ("float32", V): 75.0,  # B1 (B2: 80); 148 SM x 256 x 1.965 GHz = 74.4 supports 75
            # B1 prints 2.2 PF sparse, a rounding of 2.25: TF32 runs at half the BF16 rate on every
            # NVIDIA tensor core here (A100 156/312, H100 494.7/989.4).
            ("tfloat32", X): 1125.0,
            ("bfloat16", X): 2250.0,  # B1: 4.5 PF sparse / 2
            ("float8_e4m3fn", X): 4500.0,  # B1: 9 PF sparse / 2
            ("float4", X): 9000.0,  # B1: 18 PF sparse / 2 (S's separate "nvfp4 10000": no sheet)
            ("int8", X): 4500.0,  # B1: 9 POPS sparse / 2
        }
    ),
    # B1: 7.7 TB/s (launch material said 8.0; the 0.95 floor slack covers the difference).
    memory_bandwidth=7.7 * _TB,
    memory_bytes=180 * _GIB,  # B1: 180 GB (192 GB at launch)
    llc_bytes=126 * _MIB,  # B3, B4: 126 MB L2 (SOLAR's 192 MB and "96 MB" pages are wrong)
    compute_units=148,  # B4: 2 dies x 74 SMs
    max_clock_mhz=1965,  # S: nvidia-smi max SM clock
    features=frozenset(
        {"tf32", "bf16", "int8", "fp64-tensor", "fp8", "fp8-ocp", "fp4", "tcgen05", "tma"}
    ),
    sources=("B1", "B2", "B3", "B4", "S"),
)

_CDNA3_PEAKS = _peaks(
    {
        ("float64", V): 81.7,  # M1/M2: 304 CU x 128 FLOP/clk x 2.1 GHz
        ("float64", X): 163.4,  # M1
        ("float32", V): 163.4,  # M1: 304 x 256 x 2.1
        ("float32", X): 163.4,  # M1: fp32 matrix
        ("tfloat32", X): 653.7,  # M1: dense (1307.4 sparse)
        ("bfloat16", X): 1307.4,  # M1: dense; 2.1 GHz x 2048 x 304 = 1307.4
        ("float8_e4m3fn", X): 2614.9,  # M1: dense (sites quoting 2615 as "FP16 dense" are wrong)
        ("int8", X): 2614.9,  # M1: dense INT8 TOPS
    }
)
_CDNA3_FEATURES = frozenset({"tf32", "bf16", "int8", "fp64-tensor", "fp8", "fp8-fnuz", "mfma"})

AMD_MI300X = HardwareSpec(
    name="amd-mi300x",
    vendor="amd",
    device="rocm",
    marketing_name="AMD Instinct MI300X",
    peaks=_CDNA3_PEAKS,
    memory_bandwidth=5.3 * _TB,  # M1, K (one cloud listing's 5.2 is not AMD's figure)
    memory_bytes=192 * _GIB,  # M1
    llc_bytes=256 * _MIB,  # M3: 256 MB Infinity Cache (above 8 x 4 MB L2, one per XCD)
    compute_units=304,  # M3: 38 per XCD
    max_clock_mhz=2100,  # M1 peak engine clock
    features=_CDNA3_FEATURES,
    sources=("M1", "M2", "M3", "K"),
)

AMD_MI325X = HardwareSpec(
    name="amd-mi325x",
    vendor="amd",
    device="rocm",
    marketing_name="AMD Instinct MI325X",
    peaks=_CDNA3_PEAKS,  # M4: same CDNA3 compute die as MI300X
    memory_bandwidth=6.0 * _TB,  # M4
    memory_bytes=256 * _GIB,  # M4: 256 GB HBM3E
    llc_bytes=256 * _MIB,  # M3
    compute_units=304,
    max_clock_mhz=2100,
    features=_CDNA3_FEATURES,
    sources=("M4", "M3", "K"),
)

AMD_MI355X = HardwareSpec(
    name="amd-mi355x",
    vendor="amd",
    device="rocm",
    marketing_name="AMD Instinct MI355X",
    peaks=_peaks(
        {
            ("float64", V): 78.6,  # M5: 256 CU x 128 x 2.4 GHz
            ("float64", X): 78.6,  # M5
            ("float32", V): 157.3,  # M5: 256 x 256 x 2.4
            ("float32", X): 157.3,  # M5: fp32 matrix; gfx950 has no TF32 (hipBLASLt emulates it)
            ("bfloat16", X): 2516.6,  # M5 "2.5 PF"; 2.4 GHz x 4096 x 256 = 2516.6
            ("float8_e4m3fn", X): 5033.2,  # M5/M6 "5.0 PF" dense; a quoted "10.1 PF FP8" is sparse
            ("float4", X): 10066.3,  # M5 "10.1 PF" MXFP4 (MXFP6 runs at this rate too)
            ("int8", X): 5033.2,  # M5: dense INT8
        }
    ),
    memory_bandwidth=8.0 * _TB,  # M5
    memory_bytes=288 * _GIB,  # M5
    llc_bytes=256 * _MIB,  # M3: 256 MiB (a blog's "64 MB Infinity Cache" is wrong)
    compute_units=256,  # M3, M6: 32 per XCD
    max_clock_mhz=2400,  # M5
    features=frozenset({"bf16", "int8", "fp64-tensor", "fp8", "fp8-ocp", "fp6", "fp4", "mfma"}),
    sources=("M5", "M6", "M3", "K", "S"),
)


def _npu_sim_spec(sim: NpuSimSpec) -> HardwareSpec:
    """The simulated NPU's class, from its pinned figures: matrix unit -> "tensor"."""
    table: dict[tuple[str, str], float] = {}
    for dtype in sim.matrix_flop_per_cycle:
        if sim.matrix_peak(dtype) > 0:
            table[dtype, "tensor"] = sim.matrix_peak(dtype)
    for dtype in sim.vector_flop_per_cycle:
        if sim.vector_peak(dtype) > 0:
            table[dtype, "vector"] = sim.vector_peak(dtype)
    return HardwareSpec(
        name=sim.name,
        vendor="npu-sim",
        device="npu-sim",
        marketing_name="simulated NPU v1 (farm.hardware.npu_sim)",
        peaks=MappingProxyType(table),
        memory_bandwidth=sim.hbm_bandwidth,
        memory_bytes=sim.hbm_bytes,
        llc_bytes=sim.l2_bytes,
        compute_units=sim.cores,
        max_clock_mhz=sim.clock_hz / 1e6,
        features=frozenset({"bf16", "int8"}),  # no fp8, no tf32
        sources=("farm/hardware/npu_sim/spec.py (pinned)",),
        launch_floor_s=sim.launch_overhead_s + sim.program_overhead_s,
    )


NPU_SIM = _npu_sim_spec(NPU_SIM_V1)

_SPECS: dict[str, HardwareSpec] = {
    s.name: s
    for s in (
        NVIDIA_A100,
        NVIDIA_H100,
        NVIDIA_H200,
        NVIDIA_B200,
        AMD_MI300X,
        AMD_MI325X,
        AMD_MI355X,
        NPU_SIM,
    )
}


def get_spec(name: str) -> HardwareSpec:
    """The spec of hardware class `name`; raises UnknownNameError (with did-you-mean)."""
    if name not in _SPECS:
        raise unknown("hardware class", name, _SPECS)
    return _SPECS[name]


def all_specs() -> list[HardwareSpec]:
    """Every hardware class, in table order (NVIDIA, AMD, simulated)."""
    return list(_SPECS.values())


# Device names that look like a class but are different parts: checked before _CLASS_PATTERNS.
_NOT_A_CLASS: tuple[tuple[str, str], ...] = (
    (
        r"h100.*(pcie|nvl)",
        "an H100 PCIe/NVL card (about 2.0-3.9 TB/s, lower clocks), "
        "not the SXM5 part of nvidia-h100",
    ),
    (r"h200.*nvl", "an H200 NVL card (lower power and clocks), not the SXM part of nvidia-h200"),
    (r"gh200|gb200|gb300", "a Grace superchip module with its own clocks and memory"),
    (
        r"a100.*(pcie|40gb)",
        "an A100 PCIe or 40 GB part (1.555-1.935 TB/s), not the A100-SXM4-80GB of nvidia-a100",
    ),
    (r"h800|h20\b|a800", "an export variant with different interconnect or compute"),
    (r"mi300a", "the MI300A APU (228 CUs, shared memory), not the MI300X"),
    (r"mi350x", "the MI350X (lower clocks and power than MI355X)"),
)
_CLASS_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"^npu-sim(-v1)?$", "npu-sim-v1"),
    (r"a100[- ]sxm4[- ]80gb", "nvidia-a100"),
    (r"h100.*(hbm3|sxm)", "nvidia-h100"),  # NVML names the SXM5 part "NVIDIA H100 80GB HBM3"
    (r"h200", "nvidia-h200"),
    (r"\bb200\b", "nvidia-b200"),
    (r"mi300x", "amd-mi300x"),  # also "AMD Instinct MI300X VF" (a passed-through device)
    (r"mi325x", "amd-mi325x"),
    (r"mi355x", "amd-mi355x"),
)


def detect_class(device_name: str, *, memory_bytes: int | None = None) -> str:
    """Map a device name as NVML / amd-smi / torch report it to a hardware class name.

    `memory_bytes`, when given, must be within 10 % of the class's memory, so a part with the
    right name but a different memory configuration is not scored against the wrong figures.
    Raises UnsupportedHardwareError for known parts the farm has no class for (H100 PCIe, ...)
    and UnknownNameError for names it does not recognise.
    """
    if device_name in _SPECS:
        return device_name
    key = device_name.strip().lower()
    for pattern, what in _NOT_A_CLASS:
        if re.search(pattern, key):
            raise UnsupportedHardwareError(
                f"device '{device_name}' is {what}; the farm has no hardware class for it",
                hint=f"classes: {', '.join(_SPECS)}",
            )
    for pattern, cls in _CLASS_PATTERNS:
        if re.search(pattern, key):
            _check_memory(device_name, cls, memory_bytes)
            return cls
    raise UnknownNameError(
        f"device '{device_name}' does not match any hardware class",
        hint=f"classes: {', '.join(_SPECS)} (add a class to farm/hardware/specs.py for others)",
    )


def _check_memory(device_name: str, cls: str, memory_bytes: int | None) -> None:
    if memory_bytes is None or cls == NPU_SIM.name:
        return
    expected = _SPECS[cls].memory_bytes
    if abs(memory_bytes - expected) > 0.10 * expected:
        raise UnsupportedHardwareError(
            f"device '{device_name}' reports {memory_bytes / _GIB:.1f} GiB of memory but "
            f"{cls} has {expected / _GIB:.0f} GiB; it is a different part",
            hint=f"classes: {', '.join(_SPECS)}",
        )
