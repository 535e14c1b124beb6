"""A stand-in for the `pynvml` module: NVML's read calls over a fixed list of devices.

Only the calls farm.hardware.detect may make exist; anything else (every nvmlDeviceSet*,
nvmlDeviceReset*, ...) raises AttributeError, so a test fails if detection tries to change a
setting. `calls` records every call by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any


class NVMLError(Exception):
    pass


@dataclass
class FakeGpu:
    name: str | bytes
    memory_total: int
    uuid: str
    bus_id: str
    sm_clock: int = 1980
    mem_clock: int = 2619
    max_sm_clock: int = 1980
    temperature: int = 41
    power_mw: int = 123_456
    power_limit_mw: int = 700_000
    throttle_mask: int = 0


@dataclass
class FakeNVML:
    gpus: list[FakeGpu]
    driver: str | bytes = "560.35.03"
    cuda_driver: int = 12060
    init_error: bool = False
    new_event_api: bool = True
    calls: list[str] = field(default_factory=list)

    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0
    NVMLError = NVMLError

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("nvml"):
            if name == "nvmlDeviceGetCurrentClocksEventReasons" and not object.__getattribute__(
                self, "new_event_api"
            ):
                raise AttributeError(name)
            object.__getattribute__(self, "calls").append(name)
        return object.__getattribute__(self, name)

    def nvmlInit(self) -> None:
        if self.init_error:
            raise NVMLError("NVML Shared Library Not Found")

    def nvmlShutdown(self) -> None:
        pass

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:
        return self.gpus[index]

    def nvmlDeviceGetName(self, h: FakeGpu) -> str | bytes:
        return h.name

    def nvmlDeviceGetMemoryInfo(self, h: FakeGpu) -> SimpleNamespace:
        return SimpleNamespace(total=h.memory_total, free=h.memory_total, used=0)

    def nvmlDeviceGetUUID(self, h: FakeGpu) -> str:
        return h.uuid

    def nvmlDeviceGetPciInfo(self, h: FakeGpu) -> SimpleNamespace:
        return SimpleNamespace(busId=h.bus_id.encode())  # older bindings return bytes

    def nvmlDeviceGetClockInfo(self, h: FakeGpu, kind: int) -> int:
        return h.sm_clock if kind == self.NVML_CLOCK_SM else h.mem_clock

    def nvmlDeviceGetMaxClockInfo(self, h: FakeGpu, kind: int) -> int:
        return h.max_sm_clock

    def nvmlDeviceGetTemperature(self, h: FakeGpu, sensor: int) -> int:
        return h.temperature

    def nvmlDeviceGetPowerUsage(self, h: FakeGpu) -> int:
        return h.power_mw

    def nvmlDeviceGetEnforcedPowerLimit(self, h: FakeGpu) -> int:
        return h.power_limit_mw

    def nvmlSystemGetDriverVersion(self) -> str | bytes:
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return self.cuda_driver

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: FakeGpu) -> int:
        return h.throttle_mask

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, h: FakeGpu) -> int:
        return h.throttle_mask


MIB = 2**20
H100_SXM = FakeGpu("NVIDIA H100 80GB HBM3", 81559 * MIB, "GPU-5c1f-h100-0", "00000000:18:00.0")
H100_PCIE = FakeGpu(b"NVIDIA H100 PCIe", 81559 * MIB, "GPU-77aa-h100-p", "00000000:3B:00.0")
H200 = FakeGpu("NVIDIA H200", 143771 * MIB, "GPU-90de-h200-0", "00000000:19:00.0")
