"""What each slot is doing, shared between the slot processes and the agent's main process
through small files under FARM_HOME/state/<node>/ (the heartbeat reports them; a cancelling
agent releases them).

`RunLock` keeps one run on one slot: a message the broker delivers twice (after a reconnect, a
visibility timeout) must not start a second evaluation of a run this node already holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class Current:
    run: int
    attempt: int
    slot: int
    pid: int
    since: float


class SlotState:
    def __init__(self, directory: Path, slot: int) -> None:
        self.path = directory / f"slot-{slot}.json"
        self.slot = slot
        directory.mkdir(parents=True, exist_ok=True)

    def set(self, run: int, attempt: int) -> None:
        current = Current(run, attempt, self.slot, os.getpid(), time.time())
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(current)))
        tmp.replace(self.path)

    def clear(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def current_runs(directory: Path) -> list[Current]:
    """Every slot's current run (unreadable or half-written files are skipped)."""
    out = []
    for path in sorted(directory.glob("slot-*.json")):
        try:
            out.append(Current(**json.loads(path.read_text())))
        except (OSError, ValueError, TypeError):
            continue
    return out


def clear_all(directory: Path) -> None:
    for path in directory.glob("slot-*.json"):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


class RunLock:
    """An exclusive, non-blocking lock on one run for this node (released when the process
    dies, so a crashed slot never blocks the run)."""

    def __init__(self, directory: Path, run: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"run-{run}.lock"
        self.fd: int | None = None

    def acquire(self) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None
