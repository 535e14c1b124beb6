"""A node that knows it is sick: the agent's own checks, reported in every heartbeat (`health`),
on the nodes page and API, and in the agent's metrics. An unhealthy node takes no work.

Checks:
- the self-test: an honest kernel (examples/vector_add_triton.py) evaluated in test mode through
  the node's real sandbox on each device kind the agent serves, as `farm eval` does. Anything
  but PASSED means the node cannot evaluate (a C toolchain that cannot link, a broken sandbox,
  a sick device). It runs at start, before any slot takes work, then every
  FARM_AGENT_SELFTEST_S while no slot is busy (never beside a measurement), and right away in a
  slot whose evaluation failed in a way that might be the node's (agents.job).
- the work disk: free space under FARM_HOME at least FARM_AGENT_MIN_FREE_MB, and writable.
- the node token: a token the server refuses (agents.daemon keeps trying, unhealthy meanwhile).
- the slots: a slot process that keeps dying (agents.slots).

A slot's failed self-test is left in `selftest-failed-<slot>.json` under the node's state
directory; the agent's next passing self-test clears it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.config import REPO_ROOT, AgentConfig
from agents.devices import Slot
from farm.config import child_env

log = logging.getLogger(__name__)
SELFTEST_SOURCE = REPO_ROOT / "examples" / "vector_add_triton.py"
SELFTEST_PROBLEM = "vector_add"
PROBE_BYTES = 64 * 1024  # written and removed under FARM_HOME: a full or read-only disk shows


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the node: an UPPER_SNAKE `code` and what to do about it."""

    code: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "detail": self.detail[-2000:]}

    @classmethod
    def from_json(cls, data: Any) -> Problem:
        return cls(str(data.get("code", "UNKNOWN")), str(data.get("detail", "")))


@dataclass(frozen=True)
class Health:
    """The node's health as the heartbeat carries it (`checks`: self-tests run so far)."""

    problems: tuple[Problem, ...] = ()
    checks: int = 0

    @property
    def healthy(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "healthy": self.healthy,
            "problems": [p.to_json() for p in self.problems],
            "checks": self.checks,
        }


def disk_problems(home: Path, *, min_free_bytes: int) -> list[Problem]:
    """DISK_FULL when FARM_HOME has less than `min_free_bytes` free or cannot be written."""
    try:
        home.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(home).free
        with tempfile.NamedTemporaryFile(dir=home, prefix=".probe-") as f:
            f.write(b"\0" * PROBE_BYTES)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        return [Problem("DISK_FULL", f"{home} cannot be written ({exc.strerror}); free space")]
    if free < min_free_bytes:
        return [
            Problem(
                "DISK_FULL",
                f"{home} has {free // 2**20} MiB free, under FARM_AGENT_MIN_FREE_MB="
                f"{min_free_bytes // 2**20}; free space (old work dirs, suite caches)",
            )
        ]
    return []


def selftest(slot: Slot, cfg: AgentConfig, *, timeout_s: float) -> list[Problem]:
    """Evaluate the honest kernel on `slot`'s device through the configured sandbox; [] when
    it PASSED, else a SELFTEST_FAILED problem saying what came back."""
    with tempfile.TemporaryDirectory(prefix="selftest-", dir=_work(cfg)) as tmp:
        out = Path(tmp) / "result.json"
        command = _eval_command(slot, cfg, out)
        env = child_env({**slot.env(), "FARM_HOME": str(cfg.home)})
        try:
            done = subprocess.run(
                command, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
            )
        except subprocess.TimeoutExpired:
            return [_failed(slot, f"no answer within {timeout_s:.0f} s")]
        except OSError as exc:
            return [_failed(slot, f"could not start `farm eval`: {exc}")]
        return _verdict_problems(slot, out, done)


def _work(cfg: AgentConfig) -> Path:
    work = cfg.home / "work"
    work.mkdir(parents=True, exist_ok=True)
    return work


def _eval_command(slot: Slot, cfg: AgentConfig, out: Path) -> list[str]:
    command = [sys.executable, "-m", "farm", "eval", str(SELFTEST_SOURCE)]
    command += ["--problem", SELFTEST_PROBLEM, "--device", slot.device, "--mode", "test"]
    command += ["--sandbox", cfg.sandbox, "--no-baselines", "--json", str(out)]
    if slot.kind.gpu:
        command += ["--hardware", slot.hardware]
    return command


def _verdict_problems(
    slot: Slot, out: Path, done: subprocess.CompletedProcess[str]
) -> list[Problem]:
    try:
        document = json.loads(out.read_text())
    except (OSError, ValueError):
        tail = (done.stderr or done.stdout or "").strip()[-1500:]
        return [_failed(slot, f"`farm eval` exited {done.returncode} with no result: {tail}")]
    verdict = document.get("verdict")
    if verdict == "PASSED":
        return []
    reasons = "; ".join(
        f"{r.get('code')}: {str(r.get('detail', ''))[:300]}" for r in document.get("reasons", [])
    )
    return [_failed(slot, f"verdict {verdict} ({reasons or 'no reason given'})")]


def _failed(slot: Slot, what: str) -> Problem:
    return Problem(
        "SELFTEST_FAILED",
        f"the honest vector_add on {slot.hardware} ({slot.device}, slot {slot.number}): {what}; "
        "this node cannot evaluate kernels until it is fixed (toolchain, sandbox, device)",
    )


def selftest_kinds(slots: list[Slot]) -> list[Slot]:
    """One slot per device kind and class: what the self-test covers."""
    seen: dict[tuple[str, str], Slot] = {}
    for slot in slots:
        seen.setdefault((slot.device, slot.hardware), slot)
    return list(seen.values())


# --- what a slot leaves for the agent ------------------------------------------------------


def slot_failure_note(state_dir: Path, slot: int, problems: list[Problem]) -> None:
    """A slot's self-test failed: the agent reports it until its own self-test passes."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / f"selftest-failed-{slot}.json"
    path.write_text(json.dumps([p.to_json() for p in problems]))


def slot_failure_notes(state_dir: Path) -> list[Problem]:
    out: list[Problem] = []
    for path in sorted(state_dir.glob("selftest-failed-*.json")):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            out += [Problem.from_json(p) for p in json.loads(path.read_text())]
    return out


def slot_failure_notes_clear(state_dir: Path) -> None:
    for path in state_dir.glob("selftest-failed-*.json"):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


class HealthMonitor:
    """The agent's view of its own health: the last self-test (run in a thread of its own, so
    that heartbeats go on meanwhile), the work disk, what slots left, and problems the agent
    found elsewhere (`note`: the token, crash-looping slots)."""

    def __init__(
        self,
        cfg: AgentConfig,
        slots: list[Slot],
        state_dir: Path,
        *,
        every_s: float,
        timeout_s: float,
        min_free_bytes: int,
        test: Any = selftest,
    ) -> None:
        self.cfg, self.slots, self.state_dir = cfg, slots, state_dir
        self.every_s, self.timeout_s, self.min_free_bytes = every_s, timeout_s, min_free_bytes
        self.test = test
        self.tested: list[Problem] = []
        self.noted: dict[str, list[Problem]] = {}
        self.checks = 0
        self.last_test: float | None = None
        self.last = Health()  # what `current` found last
        self._thread: threading.Thread | None = None

    def run_selftest(self) -> list[Problem]:
        """Self-test every device kind now (blocking); returns what failed."""
        problems: list[Problem] = []
        for slot in selftest_kinds(self.slots):
            problems += self.test(slot, self.cfg, timeout_s=self.timeout_s)
        self.tested, self.checks, self.last_test = problems, self.checks + 1, time.monotonic()
        if not problems:
            slot_failure_notes_clear(self.state_dir)
        log.log(logging.WARNING if problems else logging.INFO, "self-test: %s", problems or "ok")
        return problems

    def due(self) -> bool:
        """A self-test is due: never run, or older than FARM_AGENT_SELFTEST_S (a minute at most
        while the node is unhealthy, so that it comes back soon after it is fixed). Judged from
        the health `current` found last: the disk is probed once per check, not again here."""
        if self.last_test is None:
            return True
        every = self.every_s if self.last.healthy else min(self.every_s, 60.0)
        return time.monotonic() - self.last_test >= every

    def maybe_start(self, *, idle: bool) -> bool:
        """Start a self-test in the background when one is due and no slot is measuring."""
        if not idle or not self.due() or (self._thread and self._thread.is_alive()):
            return False
        self._thread = threading.Thread(target=self.run_selftest, daemon=True, name="selftest")
        self._thread.start()
        return True

    def note(self, source: str, problems: list[Problem]) -> None:
        self.noted[source] = problems

    def current(self) -> Health:
        problems = [*self.tested, *disk_problems(self.cfg.home, min_free_bytes=self.min_free_bytes)]
        problems += slot_failure_notes(self.state_dir)
        for noted in self.noted.values():
            problems += noted
        self.last = Health(problems=tuple(_unique(problems)), checks=self.checks)
        return self.last


def _unique(problems: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))
