"""What every runner shares: the `Runner` interface, the Popen-like `SandboxProcess` that the
harness talks to, and the reader-side output cap.

The harness writes requests to `proc.stdin`, reads frames from `proc.stdout`, and kills the
process when it runs out of time. Everything here is on the trusted side.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from farm.errors import FarmError
from farm.sandbox.limits import DeviceAssignment, Limits


class SandboxUnavailable(FarmError):
    """The requested runner cannot run here (no engine, no bwrap, unsandboxed not allowed)."""


class RunnerAbsent(SandboxUnavailable):
    """The runner is not set up on this node at all (not installed, no engine configured): the
    ordinary case on many nodes, so `auto` passes over it without a warning. A runner that is set
    up but broken (an engine that does not answer, a missing image) raises SandboxUnavailable."""


class ChildHandle(Protocol):
    """What SandboxProcess needs of the child: subprocess.Popen's interface."""

    pid: int
    stdin: Any
    stdout: Any
    stderr: Any

    @property
    def returncode(self) -> int | None: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def kill(self) -> None: ...


class Stream(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...
    def fileno(self) -> int: ...
    def close(self) -> None: ...


class CappedReader:
    """A binary reader over a child's pipe that stops at `cap` bytes.

    When the child has written more than `cap` bytes in total, `on_exceeded` runs (the process
    kills the child) and every later read returns b"" (end of file). Reading through `fileno()`
    bypasses the cap: the harness reads through this object.
    """

    def __init__(self, raw: Stream, cap: int, on_exceeded: Callable[[], None]) -> None:
        self._raw = raw
        self._cap = cap
        self._on_exceeded = on_exceeded
        self.bytes_read = 0
        self.exceeded = False

    def read(self, n: int = -1, /) -> bytes:
        """Up to `n` bytes (all until EOF for n < 0); b"" at EOF or once the cap is hit."""
        if n is None or n < 0:
            chunks = []
            while chunk := self.read(1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        if self.exceeded:
            return b""
        data = self._raw.read(min(n, self._cap - self.bytes_read + 1))
        self.bytes_read += len(data)
        if self.bytes_read > self._cap:
            self.exceeded = True
            self._on_exceeded()
            return data[: len(data) - (self.bytes_read - self._cap)]
        return data

    read1 = read

    def readexactly(self, n: int) -> bytes:
        """Exactly `n` bytes; raises EOFError when the stream ends (or is capped) first."""
        parts, need = [], n
        while need:
            chunk = self.read(need)
            if not chunk:
                raise EOFError(f"stream ended {need} bytes short of {n}")
            parts.append(chunk)
            need -= len(chunk)
        return b"".join(parts)

    def readline(self, limit: int = -1) -> bytes:
        out = bytearray()
        while limit < 0 or len(out) < limit:
            ch = self.read(1)
            if not ch:
                break
            out += ch
            if ch == b"\n":
                break
        return bytes(out)

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        self._raw.close()

    @property
    def closed(self) -> bool:
        return bool(getattr(self._raw, "closed", False))


@dataclass(frozen=True)
class Termination:
    """How a sandboxed process ended.

    returncode: the exit status (negative: killed by that signal, as in subprocess).
    signal: the signal that ended it, or None. limit: the limit it hit, when known
    ("wall_seconds", "output_bytes", "cpu_seconds", "file_size_bytes"), else None.
    """

    returncode: int
    signal: int | None
    limit: str | None

    @property
    def killed(self) -> bool:
        return self.signal is not None


_SIGNAL_LIMITS = {signal.SIGXCPU: "cpu_seconds", signal.SIGXFSZ: "file_size_bytes"}


class SandboxProcess:
    """A Popen-like handle on a sandboxed process: `.stdin` (binary, unbuffered), `.stdout` and
    `.stderr` (`CappedReader`s), `.pid`, `.returncode`, `wait(timeout)`, `poll()`, `kill()`.

    A watchdog kills the process after `limits.wall_seconds`; `termination()` says which limit,
    if any, ended it. `signal_from_status` maps a wrapper's exit status back to the signal that
    killed the real child (bwrap exits with 128 + signal).
    """

    def __init__(
        self,
        popen: subprocess.Popen[bytes] | ChildHandle,
        limits: Limits,
        *,
        signal_from_status: bool = False,
        kill: Callable[[], None] | None = None,
        cleanup: Callable[[], None] | None = None,
    ) -> None:
        self._popen = popen
        self._signal_from_status = signal_from_status
        self._kill = kill or self._kill_group
        self._cleanup = cleanup
        self.limit_hit: str | None = None
        self.limit_seen = ""  # what the trusted side saw when it enforced `limit_hit` itself
        self.pid = popen.pid
        self.stdin: Any = popen.stdin
        self.stdout = CappedReader(_pipe(popen.stdout), limits.output_bytes, self._output_cap)
        self.stderr = CappedReader(_pipe(popen.stderr), limits.stderr_bytes, self._output_cap)
        self._watchdog = threading.Timer(limits.wall_seconds, self._wall_expired)
        self._watchdog.daemon = True
        self._watchdog.start()

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def poll(self) -> int | None:
        code = self._popen.poll()
        if code is not None:
            self._finish()
        return code

    def wait(self, timeout: float | None = None) -> int:
        """The exit status; raises subprocess.TimeoutExpired after `timeout` seconds."""
        code = self._popen.wait(timeout)
        self._finish()
        return code

    def kill(self) -> None:
        """Kill the sandbox: the wrapper and everything under it."""
        self._kill()

    def _kill_group(self) -> None:
        try:
            os.killpg(self._popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                self._popen.kill()

    def termination(self) -> Termination:
        """How the process ended; call after wait()."""
        code = self._popen.returncode
        if code is None:
            raise RuntimeError("termination() before the process ended; call wait() first")
        sig = -code if code < 0 else None
        if sig is None and self._signal_from_status and 128 < code < 128 + 65:
            sig = code - 128
        limit = (
            self.limit_hit
            or getattr(self._popen, "limit_hit", None)  # what an engine reports (docker's OOM)
            or (_SIGNAL_LIMITS.get(signal.Signals(sig)) if sig else None)
        )
        return Termination(returncode=code, signal=sig, limit=limit)

    def close(self) -> None:
        """Kill if still running, reap, close pipes."""
        if self._popen.poll() is None:
            self.kill()
            self._popen.wait()
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._finish()

    def __enter__(self) -> SandboxProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _output_cap(self) -> None:
        self.limit_hit = self.limit_hit or "output_bytes"
        self.kill()

    def _wall_expired(self) -> None:
        if self._popen.poll() is None:
            self.limit_hit = self.limit_hit or "wall_seconds"
            self.kill()

    def _finish(self) -> None:
        self._watchdog.cancel()
        if self._cleanup is not None:
            cleanup, self._cleanup = self._cleanup, None
            cleanup()


def _pipe(stream: Any) -> Stream:
    if stream is None:
        raise ValueError("sandboxed processes always get stdout/stderr pipes")
    return stream


class Runner(ABC):
    """Starts untrusted programs under one isolation mechanism."""

    name: str = "runner"
    note: str | None = None  # why `auto` chose this runner over a better one, when it did

    @abstractmethod
    def spawn(
        self,
        argv: list[str],
        *,
        workdir: Path,
        env: dict[str, str],
        limits: Limits,
        device: DeviceAssignment | None = None,
        ro_binds: Sequence[Path] = (),
    ) -> SandboxProcess:
        """Start `argv` in the sandbox, cwd `workdir`, with exactly `env` (nothing inherited).

        `workdir` is the one host directory the program may write; `ro_binds` are further host
        paths it may read (at the same path). Raises SandboxUnavailable when this runner cannot
        run here.
        """


def start_piped(
    command: list[str], *, env: dict[str, str], cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start `command` with exactly `env`, unbuffered pipes on all three streams, in a session of
    its own (its process group is what the runners kill), and no inherited descriptors."""
    return subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        start_new_session=True,
        close_fds=True,
    )


def rlimit_args(limits: Limits, *, address_space: bool) -> list[str]:
    """Arguments to util-linux `prlimit` that set the rlimits of `limits` on the command it runs.

    Hard limits equal soft limits except CPU, whose hard limit is 5 s later: the soft limit sends
    SIGXCPU (so the status says which limit), the hard one SIGKILLs a process that ignores it.
    """
    args = [
        f"--nproc={limits.pids}",
        f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 5}",
        f"--fsize={limits.file_size_bytes}",
        f"--nofile={limits.open_files}",
        "--core=0",
    ]
    if address_space:
        args.append(f"--as={limits.memory_bytes}")
    return args
