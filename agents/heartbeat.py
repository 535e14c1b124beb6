"""The heartbeat loop: tell the server this node is alive, what each slot is running and how its
devices are, and learn whether to drain. Runs in the agent's main process, apart from the slots,
so a long evaluation never delays it."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from agents import devices, state
from agents.client import ServerClient
from agents.devices import Slot
from agents.errors import AgentError

log = logging.getLogger(__name__)
DEVICE_READING_EVERY = 4  # read device health every Nth beat (NVML calls are not free)


class Heartbeat:
    def __init__(self, client: ServerClient, slots: list[Slot], state_dir: Path) -> None:
        self.client, self.slots, self.state_dir = client, slots, state_dir
        self.beats = 0
        self.last_ok: float | None = None
        self.drain_requested = False
        self.abandoned: list[int] = []

    def process_one(self) -> bool:
        """Send one heartbeat; True when the server answered."""
        current = sorted({c.run for c in state.current_runs(self.state_dir)})
        readings = self._readings() if self.beats % DEVICE_READING_EVERY == 0 else None
        self.beats += 1
        try:
            answer = self.client.heartbeat(current_runs=current, devices=readings)
        except AgentError as exc:
            log.warning("heartbeat failed: %s", exc)
            return False
        self.last_ok = time.time()
        self.drain_requested = bool(answer.get("drain"))
        self.abandoned = list(answer.get("abandon") or [])
        if self.abandoned:
            log.info(
                "runs %s are no longer this node's (finished, or taken back)",
                self.abandoned,
            )
        return True

    def _readings(self) -> list[dict[str, Any]]:
        from agents import metrics

        out = []
        for slot in self.slots:
            reading = devices.health(slot)
            util = reading.get("utilization_pct")
            if util is not None:
                metrics.DEVICE_UTILISATION.labels(str(slot.number), slot.hardware).set(util)
            out.append(reading)
        return out
