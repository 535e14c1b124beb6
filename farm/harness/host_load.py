"""Whether the host is contended: what a wall-clock rule asks before it accuses a kernel.

The wall-clock rules (farm.guard.plausibility) hold a kernel's reported times to walls the
trusted side measured. On a loaded host those walls stretch for reasons that are not the
kernel's: on a 2-core machine under a load of 10-16, an honest three-line softmax on the CPU was
rejected by two of them and passed a minute later. So before a rule's mismatch becomes a
verdict, the trusted side looks at the host (Linux /proc; elsewhere only what os.getloadavg
gives):

- runnable threads per core: threads in state R outside this process's own descendants (its
  sandboxes: the candidate's worker and whatever that starts, which bwrap's PID namespace keeps
  under it), less the supervisor itself, counted a few times over the steal interval (the
  median), over the cores this process may use. Neither the load average nor a bare count of
  running processes: both include the candidate's own threads, and a submission that spins
  threads would turn its own REJECTED into INCONCLUSIVE (the 1-minute average keeps them for a
  minute after the worker is gone). Other evaluations' sandboxes (another slot of the node,
  another supervisor) are load like any other program, whatever account they run as. A docker
  container is started by the docker daemon, not under this process, so its threads count: a
  submission run by the docker runner that spins can turn its REJECTED into INCONCLUSIVE (never
  an entry or a reward), not into PASSED. Where /proc is missing, the 1-minute load average is
  all there is;
- steal: the share of CPU time the hypervisor gave to other guests over a short interval;
- the yardstick now against this node's cached one: the same trusted work, measured when the
  host was quiet, taking much longer now means the host is slower now.

Any of them over its line (BUSY_PER_CORE, BUSY_STEAL, BUSY_YARDSTICK_RATIO) is a busy host: the
workload's status is INCONCLUSIVE with what was measured (farm.harness.report), never REJECTED.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUSY_PER_CORE = 1.0  # more runnable threads than cores: every thread waits for a core
BUSY_STEAL = 0.05  # 5 % of CPU time stolen by other guests
BUSY_YARDSTICK_RATIO = 1.5  # the trusted yardstick takes 1.5x its quiet-host value
STEAL_INTERVAL_S = 0.1  # how long steal is watched for
_PROC_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class HostLoad:
    """A look at the host: runnable threads per core, the share of CPU time stolen, and the
    trusted yardstick's time now over its cached quiet-host time (1.0 when there is none)."""

    per_core: float
    steal: float
    yardstick_ratio: float = 1.0

    @property
    def busy(self) -> bool:
        return (
            self.per_core > BUSY_PER_CORE
            or self.steal > BUSY_STEAL
            or self.yardstick_ratio > BUSY_YARDSTICK_RATIO
        )

    def describe(self) -> str:
        """What was measured, in words, with the lines it was held to."""
        return (
            f"{self.per_core:.2f} runnable threads per core (busy above {BUSY_PER_CORE}), "
            f"{100 * self.steal:.1f} % CPU time stolen (busy above {100 * BUSY_STEAL:.0f} %), "
            f"the trusted yardstick at {self.yardstick_ratio:.2f}x its quiet-host time (busy "
            f"above {BUSY_YARDSTICK_RATIO}x)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "per_core": round(self.per_core, 3),
            "steal": round(self.steal, 4),
            "yardstick_ratio": round(self.yardstick_ratio, 3),
            "busy": self.busy,
            "detail": self.describe(),
        }


COUNTS = 5  # runnable-thread counts per sample, spread over the steal interval


def sample(yardstick_ratio: float = 1.0, *, steal_interval_s: float = STEAL_INTERVAL_S) -> HostLoad:
    """The host now (blocks `steal_interval_s` seconds to watch steal; 0: no steal)."""
    before = _cpu_times()
    counts = [_runnable_outside_own_tree()]
    for _ in range(COUNTS - 1 if steal_interval_s > 0 else 0):
        time.sleep(steal_interval_s / (COUNTS - 1))
        counts.append(_runnable_outside_own_tree())
    return HostLoad(_per_core(counts), _steal(before, _cpu_times()), yardstick_ratio)


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _per_core(counts: list[int | None]) -> float:
    """Runnable threads per usable core (see the module docstring)."""
    known = sorted(c for c in counts if c is not None)
    if known:
        return max(0, known[len(known) // 2] - 1) / _cores()  # less this thread
    try:
        return os.getloadavg()[0] / _cores()
    except OSError:
        return 0.0


def _runnable_outside_own_tree() -> int | None:
    """Threads in state R outside this process's descendants; None without /proc."""
    try:
        pids = [int(d.name) for d in os.scandir("/proc") if d.name.isdigit()]
    except OSError:
        return None
    parent: dict[int, int] = {}
    state: dict[int, list[bytes]] = {}
    for pid in pids:
        try:
            parent[pid] = int(_stat_fields(f"/proc/{pid}/stat")[1])
            state[pid] = [
                _stat_fields(f"/proc/{pid}/task/{t.name}/stat")[0]
                for t in os.scandir(f"/proc/{pid}/task")
            ]
        except (OSError, IndexError, ValueError):
            continue  # the process or thread ended while it was read
    mine = _descendants(os.getpid(), parent)
    return sum(s.count(b"R") for pid, s in state.items() if pid not in mine)


def _stat_fields(path: str) -> list[bytes]:
    """The fields of a /proc stat file after the command name: state, ppid, ..."""
    with open(path, "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()


def _descendants(root: int, parent: dict[int, int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    out: set[int] = set()
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo += children.get(pid, [])
    return out


def _cpu_times() -> list[int]:
    """The aggregate `cpu` line of /proc/stat (user nice system idle iowait irq softirq steal
    ...), in clock ticks; [] where there is none."""
    try:
        first = _PROC_STAT.read_text().splitlines()[0].split()
        return [int(x) for x in first[1:]] if first and first[0] == "cpu" else []
    except (OSError, ValueError, IndexError):
        return []


def _steal(before: list[int], after: list[int]) -> float:
    """The share of CPU time stolen between two `_cpu_times` readings (0.0 when unknown)."""
    if len(before) < 8 or len(after) < 8:
        return 0.0
    total = sum(after[:8]) - sum(before[:8])
    return max(0.0, (after[7] - before[7]) / total) if total > 0 else 0.0
