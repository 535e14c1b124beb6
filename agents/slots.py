"""The slot processes: one `python -m agents.worker` per slot, started, watched and stopped by
the agent. Stopping is in two steps, as for the agent itself: `drain()` asks each worker to
finish its current job and exit (Celery's warm shutdown, SIGTERM); `cancel()` stops them now
(cold shutdown, SIGQUIT, then SIGKILL)."""

from __future__ import annotations

import ctypes
import json
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict

from agents.devices import Slot

log = logging.getLogger(__name__)
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Linux: this process gets SIGKILL when the agent that started it dies, so a slot never
    keeps taking jobs for a node that no longer heartbeats."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


class SlotProcess:
    def __init__(self, slot: Slot, env: dict[str, str]) -> None:
        self.slot = slot
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        env = {**os.environ, **self.env, **self.slot.env()}
        env["FARM_AGENT_SLOT_JSON"] = json.dumps(asdict(self.slot))
        self.proc = subprocess.Popen([sys.executable, "-m", "agents.worker"], env=env)
        self.starts += 1
        log.info("slot %d (%s) started, pid %d", self.slot.number, self.slot.queue, self.proc.pid)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(sig)


class SlotSet:
    def __init__(self, slots: list[Slot], env: dict[str, str]) -> None:
        self.processes = [SlotProcess(s, env) for s in slots]

    def start(self) -> None:
        for p in self.processes:
            p.start()

    def process_one(self) -> bool:
        """Restart slots that died on their own; True when one was restarted."""
        restarted = False
        for p in self.processes:
            if not p.alive():
                code = p.proc.returncode if p.proc else None
                log.warning("slot %d exited (%s); restarting it", p.slot.number, code)
                p.start()
                restarted = True
        return restarted

    def drain(self) -> None:
        for p in self.processes:
            p.signal(signal.SIGTERM)

    def cancel(self) -> None:
        for p in self.processes:
            p.signal(signal.SIGQUIT)

    def any_alive(self) -> bool:
        return any(p.alive() for p in self.processes)

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` s for every slot to exit; True when they all did."""
        deadline = time.monotonic() + timeout
        while self.any_alive() and time.monotonic() < deadline:
            time.sleep(0.2)
        return not self.any_alive()

    def kill(self) -> None:
        for p in self.processes:
            p.signal(signal.SIGKILL)
