"""What discovery reports about one device, and the helpers every vendor backend reads with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from farm.errors import FarmError
from farm.hardware.kinds import kind_of_vendor
from farm.hardware.specs import detect_class


@dataclass(frozen=True)
class DeviceInfo:
    """One device this machine can run evaluations on.

    `hardware_class` is None when the device maps to no class; `class_error` then says why
    (an H100 PCIe card, an unknown GPU). `memory_bytes` is the device's total memory in bytes.
    """

    index: int
    vendor: str  # a DeviceKind.vendor
    device: str  # a DeviceKind.name (farm.hardware.kinds)
    name: str
    hardware_class: str | None
    memory_bytes: int | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    class_error: str | None = None
    source: str = ""  # which tool reported it: "nvml", "amdsmi", "amd-smi", "torch", "builtin"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _classify(name: str, memory_bytes: int | None) -> tuple[str | None, str | None]:
    try:
        return detect_class(name, memory_bytes=memory_bytes), None
    except FarmError as exc:
        return None, str(exc)


def make_device(index: int, vendor: str, name: str, memory: int | None, **kw: Any) -> DeviceInfo:
    """A GPU of `vendor` as a DeviceInfo of its kind, with its hardware class (or why none)."""
    cls, error = _classify(name, memory)
    device = kind_of_vendor(vendor).name
    return DeviceInfo(index, vendor, device, name, cls, memory, class_error=error, **kw)


def text(value: str | bytes) -> str:
    """Vendor bindings return bytes from older versions and str from newer ones."""
    return value.decode() if isinstance(value, bytes) else str(value)


def number(value: Any) -> float | None:
    """A reading as a float; None for "N/A" and other non-numbers."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def first_number(*values: Any) -> float | None:
    """The first reading that is a number (amd-smi reports "N/A" for unsupported sensors)."""
    return next((n for n in map(number, values) if n is not None), None)


def attempt(fn: Callable[[], Any], *, ok: bool = False) -> Any:
    """fn()'s value, or None when the tool cannot give it (unsupported on this part, ...).

    With `ok`, a call that returns None counts as success and gives True.
    """
    try:
        value = fn()
    except Exception:
        return None
    return True if ok and value is None else value
