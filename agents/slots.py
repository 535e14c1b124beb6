"""The slot processes: one `python -m agents.worker` per slot, started, watched and stopped by
the agent. Stopping is in two steps, as for the agent itself: `drain()` asks each worker to
finish its current job and exit (Celery's warm shutdown, SIGTERM); `cancel()` stops them now
(cold shutdown, SIGQUIT, then SIGKILL)."""

from __future__ import annotations

import ctypes
import json
import logging
import signal
import subprocess
import sys
import time
from dataclasses import asdict

from agents.devices import Slot
from farm.config import child_env

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
        self.exits: list[tuple[float, int | None]] = []  # (monotonic time, exit code)

    def environment(self) -> dict[str, str]:
        """The slot process's environment: the agent's, the slot's pinning, and the node token
        the agent holds, however it got it (FARM_NODE_TOKEN_FILE or enrolment): the variables
        it came from are left out, since setting NAME and NAME_FILE at once is refused."""
        env = child_env({**self.env, **self.slot.env()})
        if "FARM_NODE_TOKEN" in self.env:
            for name in ("FARM_NODE_TOKEN_FILE", "FARM_NODE_ENROLL_TOKEN_FILE"):
                env.pop(name, None)
        env["FARM_AGENT_SLOT_JSON"] = json.dumps(asdict(self.slot))
        return env

    def start(self) -> None:
        env = self.environment()
        self.proc = subprocess.Popen([sys.executable, "-m", "agents.worker"], env=env)
        self.starts += 1
        log.info("slot %d (%s) started, pid %d", self.slot.number, self.slot.queue, self.proc.pid)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(sig)


CRASH_LOOP_EXITS = 3  # exits of one slot within CRASH_LOOP_WINDOW_S: it cannot start
CRASH_LOOP_WINDOW_S = 120.0


class SlotSet:
    def __init__(self, slots: list[Slot], env: dict[str, str]) -> None:
        self.processes = [SlotProcess(s, env) for s in slots]
        self.paused = False

    def start(self) -> None:
        for p in self.processes:
            p.start()

    def process_one(self) -> bool:
        """Restart slots that died on their own (none while paused); True when one was."""
        restarted = False
        for p in self.processes:
            if p.proc is not None and not p.alive() and not self.paused:
                code = p.proc.returncode
                p.exits = [*p.exits, (time.monotonic(), code)][-CRASH_LOOP_EXITS:]
                log.warning("slot %d exited (%s); restarting it", p.slot.number, code)
                p.start()
                restarted = True
        return restarted

    def crash_looping(self) -> list[str]:
        """One sentence per slot that exited CRASH_LOOP_EXITS times in CRASH_LOOP_WINDOW_S."""
        now, out = time.monotonic(), []
        for p in self.processes:
            recent = [code for at, code in p.exits if now - at < CRASH_LOOP_WINDOW_S]
            if len(recent) >= CRASH_LOOP_EXITS:
                out.append(
                    f"slot {p.slot.number} ({p.slot.hardware}) exited {len(recent)} times in "
                    f"{CRASH_LOOP_WINDOW_S:.0f} s (codes {recent}); see the agent's log"
                )
        return out

    def pause(self) -> None:
        """The node is unhealthy: slots finish their current job and exit, none restarts."""
        if not self.paused:
            self.paused = True
            self.drain()

    def resume(self) -> None:
        """Healthy again: start the slots that are not running."""
        if self.paused:
            self.paused = False
            for p in self.processes:
                if not p.alive():
                    p.start()

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
