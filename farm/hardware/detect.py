"""Device discovery and environment readings, for the harness and the node agent.

Read-only: nothing here changes clocks, power limits or modes. Each GPU kind's backend
(`farm.hardware.kinds`: `farm.hardware.nvidia` through NVML, `farm.hardware.amd` through amdsmi or
the amd-smi command) finds its devices and reads them; their libraries are imported lazily and
each is optional, and torch's device names are the last resort. The simulated NPU is always
present, and so is the CPU.

Device indices are the vendor tool's: NVML numbers GPUs in PCI bus order, which is CUDA's order
only with CUDA_DEVICE_ORDER=PCI_BUS_ID; pin a worker to a device by `uuid` or `pci_bus_id`.
"""

from __future__ import annotations

import platform
import sys
from types import ModuleType
from typing import Any

from farm.hardware import kinds
from farm.hardware.amd import AmdSmiRunner, parse_amd_smi
from farm.hardware.amd import _size_bytes as _size_bytes
from farm.hardware.device import DeviceInfo, make_device
from farm.hardware.nvidia import NVML_THROTTLE_REASONS, throttle_reasons
from farm.hardware.specs import get_spec

__all__ = [
    "NVML_THROTTLE_REASONS",
    "DeviceInfo",
    "discover",
    "parse_amd_smi",
    "read_environment",
    "software_versions",
    "throttle_reasons",
]


def discover(
    *,
    nvml: ModuleType | None = None,
    amdsmi: ModuleType | None = None,
    amd_smi_run: AmdSmiRunner | None = None,
    use_torch: bool = True,
) -> list[DeviceInfo]:
    """Every device: each GPU kind's devices (NVIDIA, then AMD), the simulated NPU and the CPU.

    The keyword arguments replace the vendor libraries (tests pass fakes): `nvml` for pynvml,
    `amdsmi` for the amdsmi package, `amd_smi_run(argv) -> stdout` for the amd-smi command.
    A vendor whose library is missing or fails contributes no devices; torch's device list is
    used only when no vendor tool reported a GPU.
    """
    tools = _tools(nvml=nvml, amdsmi=amdsmi, run=amd_smi_run)
    gpus: list[DeviceInfo] = []
    for kind in kinds.gpu_kinds():
        backend = kind.backend_module()
        if backend is not None:
            gpus += backend.devices(*tools.get(kind.vendor, ()))
    if not gpus and use_torch:
        gpus = _torch_devices()
    return gpus + [_builtin(k) for k in kinds.all_kinds() if not k.gpu]


def _tools(**fakes: Any) -> dict[str, tuple[Any, ...]]:
    """Each GPU vendor's library arguments, in its backend's `devices` / `environment` order."""
    return {
        kinds.CUDA.vendor: (fakes.get("nvml"),),
        kinds.ROCM.vendor: (fakes.get("amdsmi"), fakes.get("run")),
    }


def _builtin(kind: kinds.DeviceKind) -> DeviceInfo:
    """The one device of a kind that is always present (the simulated NPU, the CPU)."""
    classes = kind.classes()
    if classes:
        spec = get_spec(classes[0])
        name, memory, error = spec.marketing_name, spec.memory_bytes, None
    else:
        name, memory = platform.processor() or platform.machine(), None
        error = f"the {kind.name} device is for development; it has no hardware class"
    cls = classes[0] if classes else None
    return DeviceInfo(
        0, kind.vendor, kind.name, name, cls, memory, class_error=error, source="builtin"
    )


# --- torch fallback -------------------------------------------------------------------------


def _torch_devices() -> list[DeviceInfo]:
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    backend = "hip" if getattr(torch.version, "hip", None) else "cuda"
    vendor = next(k.vendor for k in kinds.gpu_kinds() if k.torch_backend == backend)
    devices = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        devices.append(make_device(i, vendor, props.name, int(props.total_memory), source="torch"))
    return devices


# --- environment ----------------------------------------------------------------------------


def read_environment(
    device_index: int = 0,
    *,
    vendor: str = kinds.CUDA.vendor,
    nvml: ModuleType | None = None,
    amdsmi: ModuleType | None = None,
) -> dict[str, Any]:
    """Clocks (MHz), temperature (C), power (W), driver and library versions for a device.

    `vendor` picks the GPU kind whose backend reads it ("nvidia": NVML, "amd": amdsmi);
    anything else reads only the software versions. A reading the tool does not give is None;
    this never raises for a missing tool, and never changes any setting.
    """
    env = software_versions()
    env.update(
        {
            "device_index": device_index,
            "sm_clock_mhz": None,
            "memory_clock_mhz": None,
            "temperature_c": None,
            "power_w": None,
            "driver_version": None,
        }
    )
    kind = next((k for k in kinds.gpu_kinds() if k.vendor == vendor), None)
    backend = kind.backend_module() if kind else None
    if backend is not None:
        lib = _tools(nvml=nvml, amdsmi=amdsmi).get(vendor, (None,))[0]
        env.update(backend.environment(device_index, lib))
    return env


def software_versions() -> dict[str, Any]:
    """Python, torch, triton, CUDA and ROCm (HIP) versions; torch/triton only if imported."""
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": None,
        "triton": None,
        "cuda_runtime": None,
        "hip": None,
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        env["torch"] = torch.__version__
        env["cuda_runtime"] = getattr(torch.version, "cuda", None)
        env["hip"] = getattr(torch.version, "hip", None)
    triton = sys.modules.get("triton")
    if triton is not None:
        env["triton"] = getattr(triton, "__version__", None)
    return env
