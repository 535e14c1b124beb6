"""Talking to the evaluation daemon: what `farm eval` and `farm pool` call. Imports no torch.

Raises `Unavailable` when no daemon answers (the caller then evaluates cold) and FarmError when
the daemon refused the request for a reason the user must fix (its message says what).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from farm.config import child_env
from farm.errors import FarmError
from farm.eval_daemon.wire import (
    DaemonStatus,
    EvalRequest,
    Reply,
    lock_path,
    read_line,
    run_dir,
    send_line,
    socket_path,
)
from farm.wire import WireError

START_WAIT_S = 300.0  # the daemon's torch import and first worker, on a busy host
STATUS_WAIT_S = 5.0
LOG_NAME = "eval-daemon.log"


class Unavailable(Exception):
    """No daemon served the request. `stale`: a socket was there but no daemon behind it, or
    the daemon went away mid-request (the caller says so before evaluating cold)."""

    def __init__(self, detail: str, *, stale: bool) -> None:
        super().__init__(detail)
        self.detail, self.stale = detail, stale


class DaemonFarmError(FarmError):
    """The daemon's answer to a request that was wrong (an unknown problem, a bad suite)."""

    def __init__(self, message: str, *, hint: str | None, exit_code: int) -> None:
        super().__init__(message, hint=hint)
        self.exit_code = exit_code


def call(message: dict[str, Any], *, timeout: float | None, path: Path | None = None) -> Reply:
    """Send one request and read its reply (`timeout` None: wait as long as it takes)."""
    path = path or socket_path()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    with sock:
        try:
            sock.connect(str(path))
        except FileNotFoundError:
            raise Unavailable("no daemon is running", stale=False) from None
        except OSError as exc:  # refused: a socket file with nobody behind it
            raise Unavailable(f"no daemon answers on {path} ({exc.strerror})", stale=True) from None
        try:
            send_line(sock, message)
            return Reply.from_json(read_line(sock))
        except (OSError, EOFError, ValueError, WireError) as exc:
            raise Unavailable(f"the daemon stopped answering ({exc})", stale=True) from None


def status(path: Path | None = None) -> DaemonStatus | None:
    """The running daemon's status, or None when none answers."""
    try:
        reply = call({"op": "status"}, timeout=STATUS_WAIT_S, path=path)
    except Unavailable:
        return None
    return reply.status


def stop(*, wait_s: float = 120.0, path: Path | None = None) -> DaemonStatus | None:
    """Ask the daemon to stop and wait until its socket is gone; the status it had, or None
    when none was running. An evaluation under way finishes first."""
    path = path or socket_path()
    try:
        reply = call({"op": "stop"}, timeout=STATUS_WAIT_S, path=path)
    except Unavailable:
        return None
    deadline = time.monotonic() + wait_s
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return reply.status


def evaluate(request: EvalRequest, path: Path | None = None) -> dict[str, Any]:
    """The result document of `request`, evaluated by the daemon."""
    reply = call(request.to_json(), timeout=None, path=path)
    if reply.ok and reply.document is not None:
        return reply.document
    error = reply.error
    if error is None or error.internal:
        raise Unavailable(error.message if error else "the daemon gave no document", stale=True)
    raise DaemonFarmError(error.message, hint=error.hint, exit_code=error.exit_code)


def start(*, device: str, sandbox: str, idle_exit_s: float) -> DaemonStatus:
    """The running daemon, started now if none runs. Raises FarmError when it does not come up
    (the daemon's log is named)."""
    current = status()
    if current is not None:
        return current
    proc = _spawn(device, sandbox, idle_exit_s)
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        current = status()
        if current is not None:
            return current
        if proc.poll() is not None and not starting():
            break  # it failed (a daemon that lost the race to another exits, and that one lives)
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        proc.terminate()
    raise FarmError(
        "the warm evaluation daemon did not start",
        hint=f"its log is {log_path()}; `farm eval --cold` evaluates without it",
    )


def starting() -> bool:
    """Whether a daemon holds the lock (it may still be importing torch)."""
    try:
        lock = lock_path().open("a")
    except OSError:
        return False
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False


def log_path() -> Path:
    return run_dir() / LOG_NAME


def _spawn(device: str, sandbox: str, idle_exit_s: float) -> subprocess.Popen[bytes]:
    """The daemon, detached from this command (its own session; output to its log)."""
    directory = run_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)
    # the daemon evaluates with this command's settings, with farm importable from its cwd
    package_root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(filter(None, [package_root, child_env().get("PYTHONPATH")]))
    env = child_env({"PYTHONPATH": path})
    argv = [sys.executable, "-m", "farm.eval_daemon.server", "--device", device]
    argv += ["--sandbox", sandbox, "--idle-exit-s", str(idle_exit_s)]
    with log_path().open("ab") as out:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            cwd=directory,
            env=env,
            start_new_session=True,
        )
