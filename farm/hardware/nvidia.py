"""NVIDIA GPUs (device kind "cuda"): discovery and readings through NVML (`pynvml`, from
nvidia-ml-py, imported lazily and optional), utilisation, the sandbox's device nodes and the
toolkit a sandbox needs.

NVML numbers GPUs in PCI bus order, which is CUDA's order only with CUDA_DEVICE_ORDER=PCI_BUS_ID
(the kind record's `index_env`).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from farm.hardware.device import DeviceInfo, attempt, make_device, text

VENDOR = "nvidia"
TOOLKIT_ENV = "CUDA_HOME"  # the variable naming the toolkit inside a sandbox
TOOLKIT_ATTR = "CUDA_HOME"  # torch.utils.cpp_extension's attribute for it
DRIVER_LIBRARY = "libcuda.so"  # the driver's user-space library, found through ldconfig
DRIVER_LIBRARY_ENV: str | None = "TRITON_LIBCUDA_PATH"  # where Triton is told it lives
SHARED_NODES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools")
CONTAINER_DRIVER: str | None = "nvidia"  # docker gives the GPU through a device request

# NVML clock-event (throttle) reason bits, from nvml.h (stable across driver versions).
NVML_THROTTLE_REASONS: dict[int, str] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def device_nodes(index: int, render_node: Path | None = None) -> list[Path]:
    """The device nodes of GPU `index`: the control nodes every GPU shares, then its own."""
    return [Path(p) for p in SHARED_NODES] + [Path(f"/dev/nvidia{index}")]


def _load_nvml(nvml: ModuleType | None) -> ModuleType | None:
    if nvml is not None:
        return nvml
    try:
        import pynvml

        return pynvml
    except ImportError:
        return None


def devices(nvml: ModuleType | None = None) -> list[DeviceInfo]:
    lib = _load_nvml(nvml)
    if lib is None:
        return []
    try:
        lib.nvmlInit()
    except Exception:  # no driver, or no NVIDIA GPU: NVMLError_LibraryNotFound / DriverNotLoaded
        return []
    try:
        return [_nvml_device(lib, i) for i in range(lib.nvmlDeviceGetCount())]
    finally:
        lib.nvmlShutdown()


def _nvml_device(lib: ModuleType, index: int) -> DeviceInfo:
    handle = lib.nvmlDeviceGetHandleByIndex(index)
    name = text(lib.nvmlDeviceGetName(handle))
    memory = int(lib.nvmlDeviceGetMemoryInfo(handle).total)
    uuid = text(lib.nvmlDeviceGetUUID(handle))
    bus = text(lib.nvmlDeviceGetPciInfo(handle).busId)
    return make_device(index, VENDOR, name, memory, uuid=uuid, pci_bus_id=bus, source="nvml")


def environment(index: int, nvml: ModuleType | None = None) -> dict[str, Any]:
    lib = _load_nvml(nvml)
    if lib is None or attempt(lib.nvmlInit, ok=True) is None:
        return {}
    try:
        h = lib.nvmlDeviceGetHandleByIndex(index)
        return {
            "sm_clock_mhz": attempt(lambda: lib.nvmlDeviceGetClockInfo(h, lib.NVML_CLOCK_SM)),
            "memory_clock_mhz": attempt(lambda: lib.nvmlDeviceGetClockInfo(h, lib.NVML_CLOCK_MEM)),
            "max_sm_clock_mhz": attempt(
                lambda: lib.nvmlDeviceGetMaxClockInfo(h, lib.NVML_CLOCK_SM)
            ),
            "temperature_c": attempt(
                lambda: lib.nvmlDeviceGetTemperature(h, lib.NVML_TEMPERATURE_GPU)
            ),
            "power_w": attempt(lambda: lib.nvmlDeviceGetPowerUsage(h) / 1000.0),  # mW
            "power_limit_w": attempt(lambda: lib.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0),
            "driver_version": attempt(lambda: text(lib.nvmlSystemGetDriverVersion())),
            "cuda_driver": attempt(lambda: _cuda_version(lib.nvmlSystemGetCudaDriverVersion())),
            "throttle_reasons": attempt(lambda: throttle_reasons(_throttle_mask(lib, h))),
        }
    finally:
        lib.nvmlShutdown()


def utilisation(index: int, nvml: ModuleType | None = None) -> float | None:
    """GPU utilisation in percent; None when NVML is missing or cannot say."""
    lib = _load_nvml(nvml)
    if lib is None or attempt(lib.nvmlInit, ok=True) is None:
        return None
    try:
        handle = lib.nvmlDeviceGetHandleByIndex(index)
        return float(lib.nvmlDeviceGetUtilizationRates(handle).gpu)
    except Exception:
        return None
    finally:
        lib.nvmlShutdown()


def _throttle_mask(lib: ModuleType, handle: Any) -> int:
    """NVML renamed "throttle reasons" to "clocks event reasons"; use whichever exists."""
    getter = getattr(lib, "nvmlDeviceGetCurrentClocksEventReasons", None)
    if getter is None:
        getter = lib.nvmlDeviceGetCurrentClocksThrottleReasons
    return int(getter(handle))


def throttle_reasons(mask: int) -> list[str]:
    """Names of the NVML clock-event reason bits set in `mask` (unknown bits as hex)."""
    names = [name for bit, name in NVML_THROTTLE_REASONS.items() if mask & bit]
    rest = mask & ~sum(NVML_THROTTLE_REASONS)
    return names + ([hex(rest)] if rest else [])


def _cuda_version(encoded: int) -> str:
    """NVML encodes CUDA 12.4 as 12040."""
    return f"{encoded // 1000}.{encoded % 1000 // 10}"
