"""This machine's devices, the hardware class of each, and the worker slots that serve them.

A slot is one worker process taking jobs from one queue (`hw.<class>`) for one device. GPUs get
one slot each; the simulated NPU gets FARM_NPU_SIM_SLOTS slots (CPU work, default 1). The plain
CPU device has no hardware class and is never served.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from farm.hardware import detect, kinds
from farm.queues import device_queue, hardware_queue, node_queue

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Slot:
    """One worker slot. `index` is the vendor tool's device index (NVML: PCI bus order)."""

    number: int
    hardware: str
    device: str  # a device kind (farm.hardware.kinds)
    index: int
    name: str
    uuid: str | None = None

    @property
    def kind(self) -> kinds.DeviceKind:
        return kinds.get_kind(self.device)

    @property
    def gpu_index(self) -> int | None:
        """The GPU this slot runs on (the vendor tool's index), None for a CPU or simulated slot."""
        return self.index if self.kind.gpu else None

    @property
    def queue(self) -> str:
        return hardware_queue(self.hardware)

    def queues(self, node_id: int | None) -> list[str]:
        """The class's queue and, once the node id is known, this node's queue of the class
        (work only this node may run: audits of other nodes' results) and, for a GPU, its
        own queue (audits of results of this node's other GPUs)."""
        if node_id is None:
            return [self.queue]
        gpu = self.gpu_index
        mine = [] if gpu is None else [device_queue(self.hardware, node_id, gpu)]
        return [self.queue, node_queue(self.hardware, node_id), *mine]

    def env(self) -> dict[str, str]:
        """Environment of the slot's worker process: its device, pinned.

        The harness gives the sandboxed worker exactly one device (the kind's `pin_variable`
        from `device_index`); the slot process itself numbers the devices as the vendor tool
        does (the kind's `index_env`: PCI bus order for NVML).
        """
        env = {"FARM_AGENT_SLOT": str(self.number), "FARM_AGENT_DEVICE_INDEX": str(self.index)}
        return {**env, **self.kind.index_env}

    def describe(self) -> dict[str, Any]:
        return {
            "slot": self.number,
            "hardware": self.hardware,
            "device": self.device,
            "index": self.index,
            "name": self.name,
            "uuid": self.uuid,
        }


def plan_slots(
    devices: list[detect.DeviceInfo], *, npu_sim_slots: int = 1, only: str = ""
) -> list[Slot]:
    """The slots for `devices`: one per GPU with a hardware class, `npu_sim_slots` for the
    simulated NPU. `only` (comma-separated classes or device kinds) narrows the set."""
    wanted = {w.strip() for w in only.split(",") if w.strip()}
    slots: list[Slot] = []
    for d in devices:
        if d.hardware_class is None:
            if kinds.is_gpu(d.device):
                log.warning("not serving %s #%d: %s", d.name, d.index, d.class_error)
            continue
        if wanted and not wanted & {d.hardware_class, d.device}:
            continue
        count = npu_sim_slots if d.device == kinds.NPU_SIM.name else 1
        for _ in range(count):
            slots.append(Slot(len(slots), d.hardware_class, d.device, d.index, d.name, d.uuid))
    return slots


def health(slot: Slot) -> dict[str, Any]:
    """The device's readings for a heartbeat: clocks (MHz), temperature (C), power (W),
    utilisation (%) where the vendor tool gives them."""
    reading = detect.read_environment(slot.index, vendor=slot.kind.vendor)
    keep = (
        "sm_clock_mhz",
        "memory_clock_mhz",
        "temperature_c",
        "power_w",
        "power_limit_w",
        "throttle_reasons",
        "driver_version",
    )
    out = {**slot.describe(), **{k: reading.get(k) for k in keep if k in reading}}
    out["utilization_pct"] = utilisation(slot)
    return out


def utilisation(slot: Slot) -> float | None:
    """GPU utilisation in percent, from backends that read it (NVML); None elsewhere."""
    backend = slot.kind.backend_module() if slot.kind.gpu else None
    read = getattr(backend, "utilisation", None)
    return None if read is None else read(slot.index)
