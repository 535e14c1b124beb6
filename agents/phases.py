"""Where an evaluation's wall time goes: sandbox start, compile, correctness, timing.

The harness (farm.harness.channel.WorkerProcess) talks to its sandboxed worker in requests named
by an `op`; the time to answer each is the cost of that phase:

    setup -> sandbox_start (spawn + the worker's imports)
    load -> compile      check -> correctness      time -> timing (candidate and baselines)

`observe()` wraps WorkerProcess.request for the duration of one evaluation, in the agent's own
(trusted) process, and adds up the seconds per phase. It changes no argument and no reply. The
harness has no hook for this yet (see docs/agents.md); when it gains one, this module shrinks to
a callback.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from farm.harness import channel

PHASE_OF_OP = {
    "setup": "sandbox_start",
    "load": "compile",
    "check": "correctness",
    "time": "timing",
}
_lock = threading.Lock()


@contextlib.contextmanager
def observe() -> Iterator[dict[str, float]]:
    """Seconds per phase of the evaluations run inside the block (this process only)."""
    totals: dict[str, float] = dict.fromkeys(PHASE_OF_OP.values(), 0.0)
    original = channel.WorkerProcess.request

    def timed(self: Any, header: dict[str, Any], **limits: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(self, header, **limits)
        finally:
            phase = PHASE_OF_OP.get(str(header.get("op")))
            if phase:
                totals[phase] += time.perf_counter() - started

    with _lock:
        channel.WorkerProcess.request = timed  # type: ignore[method-assign]
    try:
        yield totals
    finally:
        with _lock:
            channel.WorkerProcess.request = original  # type: ignore[method-assign]
