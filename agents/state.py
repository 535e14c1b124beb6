"""What each slot is doing, shared between the slot processes and the agent's main process
through small files under FARM_HOME/state/<node>/ (the heartbeat reports them; a cancelling
agent releases them).

A slot's current run is only as alive as the process that set it: a slot child killed by the
OOM killer, Celery's hard time limit or kill -9 never clears its file, so `live_and_dead` tells
the entries of live processes from those of dead ones (which the agent releases at once).

`RunLock` keeps one run on one slot: a message the broker delivers twice (after a reconnect, a
visibility timeout) must not start a second evaluation of a run this node already holds.

An `abandon-<run>` marker asks the slot running that run to stop it: the server gave the run
to another node (agents.daemon sends the slot SIGUSR2, agents.worker stops the job).
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


def live_and_dead(directory: Path) -> tuple[list[Current], list[Current]]:
    """current_runs split by whether the process that set each entry still lives."""
    live: list[Current] = []
    dead: list[Current] = []
    for current in current_runs(directory):
        (live if pid_alive(current.pid) else dead).append(current)
    return live, dead


def pid_alive(pid: int) -> bool:
    """True while a process with this id exists (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: the kill test is all there is
    return status.rsplit(")", 1)[-1].split()[0] != "Z"


def forget(directory: Path, current: Current) -> None:
    """Remove a slot's entry if it is still this one (a new job may have replaced it)."""
    path = directory / f"slot-{current.slot}.json"
    with contextlib.suppress(OSError, ValueError, TypeError):
        if Current(**json.loads(path.read_text())) == current:
            path.unlink()


def clear_all(directory: Path) -> None:
    for pattern in ("slot-*.json", "abandon-*"):
        for path in directory.glob(pattern):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def mark_abandoned(directory: Path, run: int) -> None:
    (directory / f"abandon-{run}").touch()


def is_abandoned(directory: Path, run: int) -> bool:
    return (directory / f"abandon-{run}").exists()


def unmark_abandoned(directory: Path, run: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        (directory / f"abandon-{run}").unlink()


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
