"""AMD GPUs (device kind "rocm"): discovery and readings through the `amdsmi` Python package or
the `amd-smi` command's JSON (both optional), the sandbox's device nodes and the toolkit a sandbox
needs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from farm.hardware.device import DeviceInfo, attempt, first_number, make_device, number

VENDOR = "amd"
TOOLKIT_ENV = "ROCM_PATH"
TOOLKIT_ATTR = "ROCM_HOME"
DRIVER_LIBRARY = "libamdhip64.so"
DRIVER_LIBRARY_ENV: str | None = None
SHARED_NODES = ("/dev/kfd",)
CONTAINER_DRIVER: str | None = None  # docker gives the GPU as device nodes
_MIB = 2**20
_AMD_SMI_TIMEOUT_S = 20.0

AmdSmiRunner = Callable[[list[str]], str]


def device_nodes(index: int, render_node: Path | None = None) -> list[Path]:
    """The device nodes of GPU `index`: /dev/kfd, then its render node (renderD(128 + index)
    unless `render_node` names another)."""
    render = render_node or Path(f"/dev/dri/renderD{128 + index}")
    return [Path(p) for p in SHARED_NODES] + [render]


def _load_amdsmi(amdsmi: ModuleType | None) -> ModuleType | None:
    if amdsmi is not None:
        return amdsmi
    try:
        import amdsmi as lib  # type: ignore[import-not-found]

        return lib  # type: ignore[no-any-return]
    except ImportError:  # also raised when the package is present but libamd_smi.so is not
        return None


def devices(amdsmi: ModuleType | None = None, run: AmdSmiRunner | None = None) -> list[DeviceInfo]:
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
    vram = attempt(lambda: lib.amdsmi_get_gpu_vram_info(handle)) or {}
    memory = _mib(vram.get("vram_size"))
    uuid = attempt(lambda: lib.amdsmi_get_gpu_device_uuid(handle))
    bus = attempt(lambda: lib.amdsmi_get_gpu_device_bdf(handle))
    return make_device(index, VENDOR, name, memory, uuid=uuid, pci_bus_id=bus, source="amdsmi")


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
            make_device(index, VENDOR, name, memory, uuid=uuid, pci_bus_id=bus, source="amd-smi")
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
    amount = number(value)
    return int(amount * scale) if scale and amount is not None else None  # None for "N/A"


def _mib(value: Any) -> int | None:
    try:
        return int(value) * _MIB
    except (TypeError, ValueError):
        return None


def environment(index: int, amdsmi: ModuleType | None = None) -> dict[str, Any]:
    lib = _load_amdsmi(amdsmi)
    if lib is None or attempt(lib.amdsmi_init, ok=True) is None:
        return {}
    try:
        h = lib.amdsmi_get_processor_handles()[index]
        gfx = attempt(lambda: lib.amdsmi_get_clock_info(h, lib.AmdSmiClkType.GFX)) or {}
        mem = attempt(lambda: lib.amdsmi_get_clock_info(h, lib.AmdSmiClkType.MEM)) or {}
        power = attempt(lambda: lib.amdsmi_get_power_info(h)) or {}
        driver = attempt(lambda: lib.amdsmi_get_gpu_driver_info(h)) or {}
        return {
            # amdsmi renamed cur_clk to clk; read either.
            "sm_clock_mhz": first_number(gfx.get("clk"), gfx.get("cur_clk")),
            "memory_clock_mhz": first_number(mem.get("clk"), mem.get("cur_clk")),
            "max_sm_clock_mhz": number(gfx.get("max_clk")),
            "temperature_c": number(
                attempt(
                    lambda: lib.amdsmi_get_temp_metric(
                        h, lib.AmdSmiTemperatureType.HOTSPOT, lib.AmdSmiTemperatureMetric.CURRENT
                    )
                )
            ),
            "power_w": first_number(
                power.get("current_socket_power"), power.get("average_socket_power")
            ),
            "driver_version": driver.get("driver_version"),
        }
    finally:
        lib.amdsmi_shut_down()
