"""The heartbeat loop: tell the server this node is alive, what each slot is running and how its
devices are, and learn whether to drain. Runs in the agent's main process, apart from the slots,
so a long evaluation never delays it.

Each beat also keeps the slots honest: a run whose slot process died is released to the server
at once (a retryable failure: another node takes it, no reaper wait), and a run the server says
is no longer this node's is stopped (the slot gets SIGUSR2, see agents.worker)."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents import devices, state
from agents.client import ServerClient
from agents.config import metrics_dir
from agents.devices import Slot
from agents.errors import AgentError, ClaimLost

log = logging.getLogger(__name__)
DEVICE_READING_EVERY = 4  # read device health every Nth beat (NVML calls are not free)


class Heartbeat:
    def __init__(
        self,
        client: ServerClient,
        slots: list[Slot],
        state_dir: Path,
        work_dir: Path | None = None,
        health: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.client, self.slots, self.state_dir = client, slots, state_dir
        self.work_dir = work_dir
        self.health = health  # the node's own health report (agents.health), sent each beat
        self.beats = 0
        self.last_ok: float | None = None
        self.drain_requested = False
        self.abandoned: list[int] = []

    def process_one(self) -> bool:
        """Release the runs of dead slot processes, send one heartbeat, stop the runs it says are
        no longer this node's; True when the server answered."""
        live, dead = state.live_and_dead(self.state_dir)
        if dead:
            release_runs(self.client, self.state_dir, dead, work_dir=self.work_dir)
        current = sorted({c.run for c in live})
        readings = self._readings() if self.beats % DEVICE_READING_EVERY == 0 else None
        self.beats += 1
        try:
            health = self.health() if self.health is not None else None
            answer = self.client.heartbeat(current_runs=current, devices=readings, health=health)
        except AgentError as exc:
            log.warning("heartbeat failed: %s", exc)
            return False
        self.last_ok = time.monotonic()
        self.drain_requested = answer.drain
        self.abandoned = list(answer.abandon)
        if self.abandoned:
            log.info(
                "runs %s are no longer this node's (finished, or taken back)",
                self.abandoned,
            )
            stop_runs(self.state_dir, live, set(self.abandoned))
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


def release_runs(
    client: ServerClient,
    state_dir: Path,
    entries: list[state.Current],
    *,
    code: str = "SLOT_DIED",
    detail: str = "the slot process running it died (out of memory, time limit or killed)",
    work_dir: Path | None = None,
) -> list[int]:
    """Give the runs of `entries` back to the server as retryable failures (the server requeues
    them) and forget the entries and what their jobs left on disk; returns the released runs."""
    released = []
    for current in entries:
        try:
            client.failure(current.run, current.attempt, code=code, detail=detail, retryable=True)
            released.append(current.run)
        except ClaimLost:
            pass  # no longer this node's: nothing to give back
        except AgentError as exc:
            log.error("run %s not released (%s); the server's reaper will", current.run, exc)
            continue  # keep the entry: the next beat tries again
        state.forget(state_dir, current)
        state.unmark_abandoned(state_dir, current.run)
        _forget_process(current.pid)
        if work_dir is not None:
            shutil.rmtree(work_dir / f"run-{current.run}-{current.attempt}", ignore_errors=True)
    if released:
        log.warning("released runs %s (%s)", released, code)
    return released


def stop_runs(state_dir: Path, live: list[state.Current], runs: set[int]) -> None:
    """Ask the slots running `runs` to stop them (once per run: the marker says it was asked)."""
    for current in live:
        if current.run in runs and not state.is_abandoned(state_dir, current.run):
            state.mark_abandoned(state_dir, current.run)
            try:
                os.kill(current.pid, signal.SIGUSR2)
            except ProcessLookupError:
                continue


def _forget_process(pid: int) -> None:
    """Drop a dead process's Prometheus files (multiprocess mode), so that its gauges go."""
    directory = metrics_dir()
    if directory is not None:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid, str(directory))
