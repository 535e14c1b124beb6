"""The daemon process: `python -m farm.eval_daemon.server --device cpu [--sandbox S]
[--idle-exit-s S]` (started by `farm pool start` or `farm eval --keep-warm`).

It takes FARM_HOME/run/eval.lock for its whole life (one daemon per FARM_HOME), imports the
harness, starts the worker pool of its device, and only then binds the socket, removing a stale
one left by a daemon that died. Requests are served on threads of their own; evaluations take
turns (one device, one measurement at a time). It stops on `farm pool stop`, SIGTERM or SIGINT
(the evaluation under way finishes first), or after `--idle-exit-s` without a request.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import logging
import os
import signal
import socket
import socketserver
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from farm.errors import FarmError
from farm.eval_daemon.wire import (
    DaemonStatus,
    ErrorReply,
    EvalRequest,
    Reply,
    code_stamp,
    lock_path,
    read_line,
    run_dir,
    send_line,
    settings_fingerprint,
    socket_path,
    tree_stamp,
)
from farm.wire import WireError

log = logging.getLogger("farm.eval_daemon")
DEFAULT_IDLE_EXIT_S = 3600.0
STEP_S = 0.5  # how often the serving loop looks at its stop flag and idle time


class Daemon:
    """The daemon's state: its worker pools and what `status` reports. Thread-safe."""

    def __init__(self, *, device: str, sandbox: str, idle_exit_s: float, path: Path) -> None:
        self.device, self.sandbox, self.idle_exit_s, self.path = device, sandbox, idle_exit_s, path
        self.settings = settings_fingerprint()
        self.code = code_stamp()  # taken before the harness is imported
        self.started_at = time.time()
        self.pools: dict[tuple[str, str], Any] = {}  # (device, sandbox) -> WorkerPool
        self.turn = threading.Lock()  # one evaluation at a time
        self.served = 0
        self.busy = False
        self.last_request = time.monotonic()
        self.stopping = threading.Event()
        self.suite_stamps: dict[Path, str] = {}  # suite directory -> its files as first seen

    def warm_up(self) -> None:
        """Import the harness (and torch) and start the pool of the daemon's own device."""
        import farm.harness.supervisor  # noqa: F401  torch and the harness, paid now

        self.pool(self.device, self.sandbox)

    def pool(self, device: str, sandbox: str) -> Any:
        from farm.harness.pool import WorkerPool

        key = (device, sandbox)
        if key not in self.pools:
            self.pools[key] = WorkerPool(device=device, sandbox=sandbox)
        return self.pools[key]

    def status(self) -> DaemonStatus:
        return DaemonStatus(
            pid=os.getpid(),
            started_at=self.started_at,
            socket=str(self.path),
            settings=self.settings,
            devices=[f"{d}/{s}" for d, s in self.pools],
            served=self.served,
            busy=self.busy,
            idle_exit_s=self.idle_exit_s,
            idle_s=0.0 if self.busy else round(time.monotonic() - self.last_request, 1),
        )

    def handle(self, message: Any) -> Reply:
        """One request's reply; never raises."""
        op = message.get("op") if isinstance(message, dict) else None
        if op == "status":
            return Reply(ok=True, status=self.status())
        if op == "stop":
            self.stopping.set()
            return Reply(ok=True, status=self.status())
        if op == "eval":
            try:
                request = EvalRequest.from_json(message)
            except WireError as exc:
                return _refused(str(exc), internal=True)
            return self.evaluate(request)
        return _refused(f"unknown request {op!r}", internal=True)

    def evaluate(self, request: EvalRequest) -> Reply:
        """Evaluate one submission through the harness, in a private directory of its own."""
        if request.settings != self.settings:
            return _refused("the daemon runs with other FARM_ settings than this command", True)
        changed = self.suite_changed(request.suite)
        if request.code != self.code:
            changed = "the farm's code changed since the daemon started"
        if changed is not None:
            # the harness keeps a suite and its references once loaded: a fresh daemon must
            self.stopping.set()
            return _refused(
                f"{changed}; the daemon stops (farm pool start starts a fresh one)", True
            )
        with self.turn:
            self.busy = True
            try:
                return Reply(ok=True, document=self._evaluate(request))
            except FarmError as exc:
                return Reply(ok=False, error=ErrorReply(exc.message, exc.hint, exc.exit_code))
            except Exception as exc:  # the daemon's failure: the client evaluates cold
                log.exception("evaluation failed")
                return _refused(f"{type(exc).__name__}: {exc}", internal=True)
            finally:
                self.served += 1
                self.busy = False
                self.last_request = time.monotonic()

    def _evaluate(self, request: EvalRequest) -> dict[str, Any]:
        from farm.harness.supervisor import evaluate

        # a suite given as a directory is outside the pool's readable suites: fresh workers
        pool = None if Path(request.suite).is_dir() else self.pool(request.device, request.sandbox)
        with tempfile.TemporaryDirectory(prefix="farm-warm-") as tmp:
            source = Path(tmp) / request.filename
            source.write_text(request.source, encoding="utf-8")
            result = evaluate(
                source,
                problem=request.problem,
                suite=request.suite,
                device=request.device,
                mode=request.mode,
                hardware=request.hardware,
                workloads=request.workloads,
                sandbox=request.sandbox,
                baselines=request.baselines,
                policy={"budget_ms": request.budget_ms} if request.budget_ms else {},
                pool=pool,
            )
        return result.to_json()  # the farm.result/1 document, made where it leaves

    def suite_changed(self, suite: str) -> str | None:
        """Why this daemon must not evaluate on `suite` (its files changed on disk since it
        first did), or None; an unknown suite is left to the harness to name."""
        from farm.suite.loader import find_suite

        try:
            root = find_suite(suite).resolve()
        except FarmError:
            return None
        stamp = tree_stamp(root)
        seen = self.suite_stamps.setdefault(root, stamp)
        return None if seen == stamp else f"suite {root.name} changed on disk ({root})"

    def idle_too_long(self) -> bool:
        return not self.busy and time.monotonic() - self.last_request > self.idle_exit_s

    def close(self) -> None:
        for pool in self.pools.values():
            pool.close()
        self.pools.clear()


def _refused(message: str, internal: bool = False) -> Reply:
    return Reply(ok=False, error=ErrorReply(message, exit_code=1, internal=internal))


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        if _peer_uid(sock) != os.getuid():
            return  # another user's process: no answer
        try:
            message = read_line(sock)
        except (EOFError, ValueError, OSError):
            return
        with contextlib.suppress(OSError):  # a client that went away
            send_line(sock, self.server.daemon.handle(message).to_json())


def _peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = False  # a stop waits for the evaluation under way
    block_on_close = True

    def __init__(self, path: Path, daemon: Daemon) -> None:
        self.daemon = daemon
        old = os.umask(0o177)  # the socket is created 0600, never briefly wider
        try:
            super().__init__(str(path), _Handler)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self.timeout = STEP_S


def serve_one(server: _Server) -> bool:
    """Wait up to STEP_S for one request and hand it to a thread; False when the daemon should
    stop (asked to, or idle too long)."""
    server.handle_request()
    daemon = server.daemon
    return not (daemon.stopping.is_set() or daemon.idle_too_long())


def take_lock() -> IO[str] | None:
    """The daemon's lock file, held open; None when another daemon holds it."""
    lock = lock_path().open("a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return None
    return lock


def private_run_dir() -> Path:
    directory = run_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)
    return directory


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m farm.eval_daemon.server")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--sandbox", default="auto")
    ap.add_argument("--idle-exit-s", type=float, default=DEFAULT_IDLE_EXIT_S)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    private_run_dir()
    lock = take_lock()
    if lock is None:
        log.info("another daemon holds %s; exiting", lock_path())
        return 0
    path = socket_path()
    daemon = Daemon(
        device=args.device, sandbox=args.sandbox, idle_exit_s=args.idle_exit_s, path=path
    )
    try:
        daemon.warm_up()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # we hold the lock: whatever socket is there is a dead daemon's
        server = _Server(path, daemon)
    except Exception:
        daemon.close()
        raise
    _on_signals(daemon)
    daemon.last_request = time.monotonic()  # idle from now: the warm-up is not idleness
    log.info("serving on %s (pid %d)", path, os.getpid())
    try:
        while serve_one(server):
            pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        server.server_close()  # waits for the evaluation under way
        daemon.close()
        lock.close()
    log.info("stopped after %d evaluations", daemon.served)
    return 0


def _on_signals(daemon: Daemon) -> None:
    def stop(_signum: int, _frame: Any) -> None:
        daemon.stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


if __name__ == "__main__":
    sys.exit(main())
