"""Device discovery and environment readings, for the harness and the node agent.

Read-only: nothing here changes clocks, power limits or modes. Vendor libraries are imported
lazily and each is optional: NVIDIA through NVML (`pynvml`, from nvidia-ml-py), AMD through the
`amdsmi` Python package or the `amd-smi` command's JSON, and torch's device names as the last
resort. The simulated NPU is always present, and so is the CPU.

Device indices are the vendor tool's: NVML numbers GPUs in PCI bus order, which is CUDA's order
only with CUDA_DEVICE_ORDER=PCI_BUS_ID; pin a worker to a device by `uuid` or `pci_bus_id`.
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

from farm.errors import FarmError
from farm.hardware.specs import NPU_SIM, detect_class

_MIB = 2**20
_AMD_SMI_TIMEOUT_S = 20.0

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


@dataclass(frozen=True)
class DeviceInfo:
    """One device this machine can run evaluations on.

    `hardware_class` is None when the device maps to no class; `class_error` then says why
    (an H100 PCIe card, an unknown GPU). `memory_bytes` is the device's total memory in bytes.
    """

    index: int
    vendor: str  # "nvidia" | "amd" | "npu-sim" | "cpu"
    device: str  # "cuda" | "rocm" | "npu-sim" | "cpu"
    name: str
    hardware_class: str | None
    memory_bytes: int | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    class_error: str | None = None
    source: str = ""  # which tool reported it: "nvml", "amdsmi", "amd-smi", "torch", "builtin"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


AmdSmiRunner = Callable[[list[str]], str]


def discover(
    *,
    nvml: ModuleType | None = None,
    amdsmi: ModuleType | None = None,
    amd_smi_run: AmdSmiRunner | None = None,
    use_torch: bool = True,
) -> list[DeviceInfo]:
    """Every device: NVIDIA GPUs, AMD GPUs, the simulated NPU and the CPU, in that order.

    The keyword arguments replace the vendor libraries (tests pass fakes): `nvml` for pynvml,
    `amdsmi` for the amdsmi package, `amd_smi_run(argv) -> stdout` for the amd-smi command.
    A vendor whose library is missing or fails contributes no devices; torch's device list is
    used only when neither vendor tool reported a GPU.
    """
    gpus = _nvidia_devices(nvml) + _amd_devices(amdsmi, amd_smi_run)
    if not gpus and use_torch:
        gpus = _torch_devices()
    builtin = [
        DeviceInfo(
            0,
            "npu-sim",
            "npu-sim",
            NPU_SIM.marketing_name,
            NPU_SIM.name,
            memory_bytes=NPU_SIM.memory_bytes,
            source="builtin",
        ),
        DeviceInfo(
            0,
            "cpu",
            "cpu",
            platform.processor() or platform.machine(),
            None,
            class_error="the CPU device is for development; it has no hardware class",
            source="builtin",
        ),
    ]
    return gpus + builtin


def _classify(name: str, memory_bytes: int | None) -> tuple[str | None, str | None]:
    try:
        return detect_class(name, memory_bytes=memory_bytes), None
    except FarmError as exc:
        return None, str(exc)


def _device(index: int, vendor: str, name: str, memory: int | None, **kw: Any) -> DeviceInfo:
    cls, error = _classify(name, memory)
    device = "cuda" if vendor == "nvidia" else "rocm"
    return DeviceInfo(index, vendor, device, name, cls, memory, class_error=error, **kw)


# --- NVIDIA (NVML) --------------------------------------------------------------------------


def _load_nvml(nvml: ModuleType | None) -> ModuleType | None:
    if nvml is not None:
        return nvml
    try:
        import pynvml

        return pynvml
    except ImportError:
        return None


def _nvidia_devices(nvml: ModuleType | None) -> list[DeviceInfo]:
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
    name = _text(lib.nvmlDeviceGetName(handle))
    memory = int(lib.nvmlDeviceGetMemoryInfo(handle).total)
    uuid = _text(lib.nvmlDeviceGetUUID(handle))
    bus = _text(lib.nvmlDeviceGetPciInfo(handle).busId)
    return _device(index, "nvidia", name, memory, uuid=uuid, pci_bus_id=bus, source="nvml")


def _text(value: str | bytes) -> str:
    """NVML returns bytes from older bindings and str from newer ones."""
    return value.decode() if isinstance(value, bytes) else str(value)


# --- AMD (amdsmi package, or the amd-smi command) -------------------------------------------


def _load_amdsmi(amdsmi: ModuleType | None) -> ModuleType | None:
    if amdsmi is not None:
        return amdsmi
    try:
        import amdsmi as lib  # type: ignore[import-not-found]

        return lib  # type: ignore[no-any-return]
    except ImportError:  # also raised when the package is present but libamd_smi.so is not
        return None


def _amd_devices(amdsmi: ModuleType | None, run: AmdSmiRunner | None) -> list[DeviceInfo]:
    lib = _load_amdsmi(amdsmi)
    if lib is not None:
        found = _amdsmi_devices(lib)
        if found is not None:
            return found
    if run is None:
        if shutil.which("amd-smi") is None:
            return []
        run = _run_amd_smi
    try:
        return parse_amd_smi(
            run(["amd-smi", "list", "--json"]), run(["amd-smi", "static", "--json"])
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return []


def _amdsmi_devices(lib: ModuleType) -> list[DeviceInfo] | None:
    """Devices through the amdsmi package; None when it cannot initialise (use the CLI)."""
    try:
        lib.amdsmi_init()
    except Exception:
        return None
    try:
        return [_amdsmi_device(lib, i, h) for i, h in enumerate(lib.amdsmi_get_processor_handles())]
    finally:
        lib.amdsmi_shut_down()


def _amdsmi_device(lib: ModuleType, index: int, handle: Any) -> DeviceInfo:
    asic = lib.amdsmi_get_gpu_asic_info(handle)
    name = asic.get("market_name") or asic.get("product_name") or "AMD GPU"
    vram = _try(lambda: lib.amdsmi_get_gpu_vram_info(handle)) or {}
    memory = _mib(vram.get("vram_size"))
    uuid = _try(lambda: lib.amdsmi_get_gpu_device_uuid(handle))
    bus = _try(lambda: lib.amdsmi_get_gpu_device_bdf(handle))
    return _device(index, "amd", name, memory, uuid=uuid, pci_bus_id=bus, source="amdsmi")


def _run_amd_smi(argv: list[str]) -> str:
    done = subprocess.run(
        argv, capture_output=True, text=True, check=True, timeout=_AMD_SMI_TIMEOUT_S
    )
    return done.stdout


def parse_amd_smi(list_json: str, static_json: str) -> list[DeviceInfo]:
    """Devices from `amd-smi list --json` and `amd-smi static --json` output.

    Accepts both layouts amd-smi has printed: a bare list of per-GPU objects, or an object
    with a "gpu_data" list. Memory sizes may be {"value": N, "unit": "MB"}, "N MB" or N (MB).
    Raises ValueError when the text is not such JSON.
    """
    listed = {int(g["gpu"]): g for g in _gpu_entries(list_json)}
    devices = []
    for entry in _gpu_entries(static_json):
        index = int(entry["gpu"])
        asic = entry.get("asic") or {}
        name = asic.get("market_name") or asic.get("product_name") or "AMD GPU"
        memory = _size_bytes((entry.get("vram") or {}).get("size"))
        extra = listed.get(index, {})
        bus = extra.get("bdf") or (entry.get("bus") or {}).get("bdf")
        uuid = extra.get("uuid") or asic.get("uuid")
        devices.append(
            _device(index, "amd", name, memory, uuid=uuid, pci_bus_id=bus, source="amd-smi")
        )
    return devices


def _gpu_entries(text: str) -> list[dict[str, Any]]:
    data = json.loads(text)
    if isinstance(data, dict):
        data = data.get("gpu_data", [data])
    if not isinstance(data, list) or not all(isinstance(d, dict) and "gpu" in d for d in data):
        raise ValueError("amd-smi JSON: expected a list of objects with a 'gpu' index")
    return data


def _size_bytes(size: Any) -> int | None:
    """A memory size as amd-smi prints it (MB unless a unit says otherwise) in bytes."""
    if isinstance(size, dict):
        value, unit = size.get("value"), str(size.get("unit", "MB"))
    elif isinstance(size, str):
        value, _, unit = size.strip().partition(" ")
    else:
        value, unit = size, "MB"
    scale = {"B": 1, "KB": 2**10, "MB": _MIB, "GB": 2**30}.get(unit.strip().upper() or "MB")
    number = _number(value)
    return int(number * scale) if scale and number is not None else None  # None for "N/A"


def _mib(value: Any) -> int | None:
    try:
        return int(value) * _MIB
    except (TypeError, ValueError):
        return None


# --- torch fallback -------------------------------------------------------------------------


def _torch_devices() -> list[DeviceInfo]:
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    vendor = "amd" if getattr(torch.version, "hip", None) else "nvidia"
    devices = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        devices.append(_device(i, vendor, props.name, int(props.total_memory), source="torch"))
    return devices


# --- environment ----------------------------------------------------------------------------


def read_environment(
    device_index: int = 0,
    *,
    vendor: str = "nvidia",
    nvml: ModuleType | None = None,
    amdsmi: ModuleType | None = None,
) -> dict[str, Any]:
    """Clocks (MHz), temperature (C), power (W), driver and library versions for a device.

    `vendor` picks the tool: "nvidia" (NVML), "amd" (amdsmi); anything else reads only the
    software versions. A reading the tool does not give is None; this never raises for a
    missing tool, and never changes any setting.
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
    if vendor == "nvidia":
        env.update(_nvml_environment(device_index, _load_nvml(nvml)))
    elif vendor == "amd":
        env.update(_amdsmi_environment(device_index, _load_amdsmi(amdsmi)))
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


def _nvml_environment(index: int, lib: ModuleType | None) -> dict[str, Any]:
    if lib is None or _try(lib.nvmlInit, ok=True) is None:
        return {}
    try:
        h = lib.nvmlDeviceGetHandleByIndex(index)
        return {
            "sm_clock_mhz": _try(lambda: lib.nvmlDeviceGetClockInfo(h, lib.NVML_CLOCK_SM)),
            "memory_clock_mhz": _try(lambda: lib.nvmlDeviceGetClockInfo(h, lib.NVML_CLOCK_MEM)),
            "max_sm_clock_mhz": _try(lambda: lib.nvmlDeviceGetMaxClockInfo(h, lib.NVML_CLOCK_SM)),
            "temperature_c": _try(
                lambda: lib.nvmlDeviceGetTemperature(h, lib.NVML_TEMPERATURE_GPU)
            ),
            "power_w": _try(lambda: lib.nvmlDeviceGetPowerUsage(h) / 1000.0),  # mW
            "power_limit_w": _try(lambda: lib.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0),
            "driver_version": _try(lambda: _text(lib.nvmlSystemGetDriverVersion())),
            "cuda_driver": _try(lambda: _cuda_version(lib.nvmlSystemGetCudaDriverVersion())),
            "throttle_reasons": _try(lambda: throttle_reasons(_throttle_mask(lib, h))),
        }
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


def _amdsmi_environment(index: int, lib: ModuleType | None) -> dict[str, Any]:
    if lib is None or _try(lib.amdsmi_init, ok=True) is None:
        return {}
    try:
        h = lib.amdsmi_get_processor_handles()[index]
        gfx = _try(lambda: lib.amdsmi_get_clock_info(h, lib.AmdSmiClkType.GFX)) or {}
        mem = _try(lambda: lib.amdsmi_get_clock_info(h, lib.AmdSmiClkType.MEM)) or {}
        power = _try(lambda: lib.amdsmi_get_power_info(h)) or {}
        driver = _try(lambda: lib.amdsmi_get_gpu_driver_info(h)) or {}
        return {
            # amdsmi renamed cur_clk to clk; read either.
            "sm_clock_mhz": _first_number(gfx.get("clk"), gfx.get("cur_clk")),
            "memory_clock_mhz": _first_number(mem.get("clk"), mem.get("cur_clk")),
            "max_sm_clock_mhz": _number(gfx.get("max_clk")),
            "temperature_c": _number(
                _try(
                    lambda: lib.amdsmi_get_temp_metric(
                        h, lib.AmdSmiTemperatureType.HOTSPOT, lib.AmdSmiTemperatureMetric.CURRENT
                    )
                )
            ),
            "power_w": _first_number(
                power.get("current_socket_power"), power.get("average_socket_power")
            ),
            "driver_version": driver.get("driver_version"),
        }
    finally:
        lib.amdsmi_shut_down()


def _number(value: Any) -> float | None:
    """A reading as a float; None for "N/A" and other non-numbers."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _first_number(*values: Any) -> float | None:
    """The first reading that is a number (amd-smi reports "N/A" for unsupported sensors)."""
    return next((n for n in map(_number, values) if n is not None), None)


def _try(fn: Callable[[], Any], *, ok: bool = False) -> Any:
    """fn()'s value, or None when the tool cannot give it (unsupported on this part, ...).

    With `ok`, a call that returns None counts as success and gives True.
    """
    try:
        value = fn()
    except Exception:
        return None
    return True if ok and value is None else value
