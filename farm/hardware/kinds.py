"""Device kinds: one record per kind of device the farm evaluates on, and the only place that says
what a kind is.

A device kind ("cuda", "rocm", "npu-sim", "cpu") is what `farm eval --device` names and what a
worker slot serves. Its record says who makes it, whether it is a GPU, which torch device and
build run on it, which variables hide its devices, how it is timed and profiled, which sandbox
image it runs in and which module (`backend`) discovers and reads it. Hardware classes are not
listed here: a kind's classes are the rows of the spec table (`farm.hardware.specs`) whose
`device` is the kind. Adding a kind: docs/hardware.md, "Adding a device kind".
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import Literal

from farm.errors import unknown
from farm.hardware import specs

Timer = Literal["gpu-events", "npu-sim-ledger", "wall-clock"]


@dataclass(frozen=True)
class DeviceKind:
    """One device kind.

    visibility: the vendor runtime's variables that hide devices, outermost first; the harness
    pins a worker to one device with `pin_variable` (the first) and sets no other.
    timer: "gpu-events" (farm.harness.timing.GpuTimer), "npu-sim-ledger"
    (farm.harness.simtimer.SimTimer) or "wall-clock" (farm.harness.timing.CpuTimer).
    profiler: the vendor profiler profile mode runs ("ncu", "rocprof"), None where there is none.
    image: the sandbox image, deploy/sandbox/Dockerfile.<image>, tagged kernel-farm-sandbox:<image>
    and overridden by FARM_SANDBOX_IMAGE_<IMAGE>.
    backend: the module that discovers this kind's devices and reads their environment; for
    GPUs it also names their sandbox device nodes. None for the plain CPU.
    languages: the submission languages only this kind builds ("cuda", "hip"); pytorch and
    triton run on every kind.
    index_env: environment of a slot process so that its device indices are the vendor tool's.
    cool_down: wait for a comparable thermal state before measuring (farm.harness.thermal).
    """

    name: str
    vendor: str
    gpu: bool
    torch_device: str  # torch.device type the tensors live on ("cuda" also for ROCm's HIP build)
    torch_backend: str  # the torch build that drives it: "cuda", "hip" or "cpu"
    visibility: tuple[str, ...]
    timer: Timer
    profiler: str | None
    image: str
    backend: str | None
    languages: tuple[str, ...] = ()  # source languages that build only for this kind
    index_env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    cool_down: bool = False

    @property
    def pin_variable(self) -> str | None:
        """The variable the harness sets to give a worker exactly one device."""
        return self.visibility[0] if self.visibility else None

    @property
    def simulated(self) -> bool:
        """Times come from a cost model, not a clock (no wall-clock plausibility rule)."""
        return self.timer == "npu-sim-ledger"

    @property
    def deterministic(self) -> bool:
        """The same work gets the same time on every run and host (the cost model is a pure
        function of counts, docs/npu-sim.md "Determinism"): boards tie equal times exactly and
        keep the earlier submission first (farm.scoring.times_tie)."""
        return self.simulated

    @property
    def gpu_vendor(self) -> str | None:
        """The vendor for sandbox runners and toolchains: set for GPUs, None otherwise."""
        return self.vendor if self.gpu else None

    def classes(self) -> list[str]:
        """The hardware classes of this kind, in spec-table order."""
        return [s.name for s in specs.all_specs() if s.device == self.name]

    def backend_module(self) -> ModuleType | None:
        return importlib.import_module(self.backend) if self.backend else None


CUDA = DeviceKind(
    name="cuda",
    vendor="nvidia",
    gpu=True,
    torch_device="cuda",
    torch_backend="cuda",
    visibility=("CUDA_VISIBLE_DEVICES",),
    timer="gpu-events",
    profiler="ncu",
    image="cuda",
    backend="farm.hardware.nvidia",
    languages=("cuda",),
    # NVML numbers GPUs in PCI bus order; CUDA does so only when asked
    index_env=MappingProxyType({"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}),
    cool_down=True,
)
ROCM = DeviceKind(
    name="rocm",
    vendor="amd",
    gpu=True,
    torch_device="cuda",  # torch's HIP build keeps the "cuda" device type
    torch_backend="hip",
    # HIP_VISIBLE_DEVICES numbers the devices ROCr exposes (ROCR_VISIBLE_DEVICES): setting both
    # to the same index hides every GPU but the first, so the harness sets only the HIP one
    visibility=("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"),
    timer="gpu-events",
    profiler="rocprof",
    image="rocm",
    backend="farm.hardware.amd",
    languages=("hip",),
)
NPU_SIM = DeviceKind(
    name="npu-sim",
    vendor="npu-sim",
    gpu=False,
    torch_device="cpu",
    torch_backend="cpu",
    visibility=(),
    timer="npu-sim-ledger",
    profiler=None,
    image="cpu",
    backend="farm.hardware.npu_sim",
)
CPU = DeviceKind(
    name="cpu",
    vendor="cpu",
    gpu=False,
    torch_device="cpu",
    torch_backend="cpu",
    visibility=(),
    timer="wall-clock",
    profiler=None,
    image="cpu",
    backend=None,
)

_KINDS: dict[str, DeviceKind] = {k.name: k for k in (CUDA, ROCM, NPU_SIM, CPU)}
KIND_NAMES: tuple[str, ...] = tuple(_KINDS)


def get_kind(name: str) -> DeviceKind:
    """The record of device kind `name`; raises UnknownNameError (with did-you-mean)."""
    if name not in _KINDS:
        raise unknown("device", name, _KINDS)
    return _KINDS[name]


def all_kinds() -> list[DeviceKind]:
    """Every device kind: GPUs first, then the simulated NPU and the CPU."""
    return list(_KINDS.values())


def gpu_kinds() -> list[DeviceKind]:
    return [k for k in _KINDS.values() if k.gpu]


def kind_of_vendor(vendor: str) -> DeviceKind:
    """The kind a vendor's devices are ("nvidia" -> cuda); UnknownNameError for others."""
    found = {k.vendor: k for k in _KINDS.values()}
    if vendor not in found:
        raise unknown("vendor", vendor, found)
    return found[vendor]


def is_gpu(device: str) -> bool:
    """True for the GPU kinds; False for the simulated NPU, the CPU and names that are no kind."""
    return device in _KINDS and _KINDS[device].gpu


def gpu_vendor(device: str) -> str | None:
    """The GPU vendor behind device kind `device`; None for non-GPU kinds and unknown names."""
    return _KINDS[device].gpu_vendor if device in _KINDS else None


def on_gpu(torch_device: object) -> bool:
    """True when a torch.device is a GPU kind's device type (ROCm's HIP build names it "cuda")."""
    return getattr(torch_device, "type", None) in {k.torch_device for k in gpu_kinds()}


def kind_of_class(hardware: str) -> DeviceKind:
    """The kind a hardware class runs on, from its spec-table row."""
    return get_kind(specs.get_spec(hardware).device)


def gpu_backend(vendor: str) -> ModuleType:
    """The backend module of a GPU vendor ("nvidia" -> farm.hardware.nvidia)."""
    kind = kind_of_vendor(vendor)
    module = kind.backend_module()
    if not kind.gpu or module is None:
        raise ValueError(f"{vendor!r} is not a GPU vendor")
    return module
