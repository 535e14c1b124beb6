"""Converting each source problem in a child process, so that nothing a source does can end the
import: a problem that raises, aborts in native code (torch's C++ `terminate`, exit 134), or runs
past its limits is one line of reason, and the others go on and are written.

One child (a spawned `multiprocessing` process, started with torch's intra-op threads set to one)
converts the problems one after the other; the parent sends a path and waits. A child that dies
or is killed is replaced by a fresh one for the next problem.

Limits (`Limits`), chosen so that host load never decides a problem's fate:
- CPU time, `cpu_s` per problem, enforced by the kernel inside the child (RLIMIT_CPU: SIGXCPU
  ends it). CPU time is what the source's own code consumes, whatever else the host runs, so a
  problem that converts on an idle host converts on a host at load 18, only later. 300 s: the
  costliest KernelBench problem, level3/41_GRUBidirectional, takes 214 s of CPU on one thread
  (11 probes, each unrolling 512 steps of 12 GRU layer-directions under FakeTensorMode).
- Wall time, `wall_s` per problem, enforced by the parent, which kills the child. It is
  generous (an hour against 300 s of CPU) and is there only for a child that waits instead of
  computing (a deadlock, a blocked read): at load 18 on 2 cores a child gets about a ninth of a
  core, so 300 s of CPU takes about 45 minutes of wall.

The child runs with HF_HUB_OFFLINE=1: a source that builds a Hugging Face model reads its config
from the local cache and downloads nothing.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import resource
import signal
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from farm.errors import SuiteError
from farm.suite.importers import common

Draft = Callable[[Path, Path], common.ProblemDraft]
READY = "ready"  # the child's first message, once torch is imported


@dataclass(frozen=True)
class Limits:
    """Per-problem limits of a conversion: CPU seconds (the child's own), wall seconds; and the
    wall seconds a fresh child may take to start (import torch) before the first problem."""

    cpu_s: float = 300.0
    wall_s: float = 3600.0
    start_s: float = 600.0


class Converter:
    """Converts problems in a child process; `convert` returns a draft or one line of reason.
    Use as a context manager, so the child is stopped however the import ends."""

    def __init__(self, draft: Draft, root: Path, limits: Limits) -> None:
        self._draft, self._root, self.limits = draft, root, limits
        self._child: Any = None
        self._conn: Connection | None = None

    def __enter__(self) -> Converter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def convert(self, path: Path) -> common.ProblemDraft | str:
        """The problem's draft, or one line saying why there is none. Raises SuiteError when
        no converting process starts at all."""
        conn = self._connection()
        conn.send((path, self.limits.cpu_s))
        if not conn.poll(self.limits.wall_s):
            self._stop()
            return f"converting it took over {self.limits.wall_s:g} s of wall time (stopped)"
        try:
            ok, value = conn.recv()
        except (EOFError, OSError):
            return self._death_reason()
        return value if ok else str(value)

    def close(self) -> None:
        if self._conn is not None and self._child.is_alive():
            try:
                self._conn.send(None)
                self._child.join(5)
            except OSError:
                pass
        self._stop()

    def _connection(self) -> Connection:
        if self._conn is None:
            context = multiprocessing.get_context("spawn")
            parent, child = context.Pipe()
            self._child = context.Process(
                target=serve, args=(child, self._draft, self._root), daemon=True
            )
            self._child.start()
            child.close()
            self._conn = parent
            self._await_start(parent)
        return self._conn

    def _await_start(self, conn: Connection) -> None:
        """The child's start (importing torch) is not counted against the first problem."""
        try:
            if conn.poll(self.limits.start_s) and conn.recv() == READY:
                return
        except (EOFError, OSError):
            pass
        self._stop()
        raise SuiteError(
            f"the process that converts problems did not start within {self.limits.start_s:g} s",
            hint="check that `python -c 'import torch'` works in this environment",
        )

    def _death_reason(self) -> str:
        self._child.join(5)
        code = self._child.exitcode
        self._stop()
        return death_reason(code, self.limits)

    def _stop(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child.join()
        if self._conn is not None:
            self._conn.close()
        self._child, self._conn = None, None


def death_reason(exitcode: int | None, limits: Limits) -> str:
    """One line for a converting process that ended without answering."""
    if exitcode == -signal.SIGXCPU:
        return f"converting it used over {limits.cpu_s:g} s of CPU time (probing its shapes)"
    if exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name
        return f"the source's code ended the converting process ({name}; native code aborted)"
    return f"the source's code ended the converting process (exit status {exitcode})"


def serve(conn: Connection, draft: Draft, root: Path) -> None:
    """The child's loop: convert each path received under a fresh CPU limit, answer
    (True, draft) or (False, reason); stop on None."""
    os.environ["HF_HUB_OFFLINE"] = "1"  # before any source imports huggingface_hub
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # an abort leaves no core file behind
    import torch

    torch.set_num_threads(1)
    with common.quiet_torch():
        conn.send(READY)
        while (job := conn.recv()) is not None:
            path, cpu_s = job
            _limit_cpu(cpu_s)
            answer = _answer(draft, path, root)
            try:
                conn.send(answer)
            except Exception as exc:  # a draft holding something pickle cannot carry
                conn.send((False, f"its draft cannot be sent back: {common.reason_of(exc)}"))


def _answer(draft: Draft, path: Path, root: Path) -> tuple[bool, Any]:
    try:
        return True, draft(path, root)
    except Exception as exc:  # the source's own code may raise anything
        return False, common.reason_of(exc)


def _limit_cpu(seconds: float) -> None:
    """SIGXCPU once this process has used `seconds` more CPU time than it has so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + seconds)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
