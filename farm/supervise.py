"""Programs run as child processes: `manage.py` commands whose answer is one JSON line, and a
set of long-running processes, each in its own session with its log file, stopped in order.

Used by `farm up` and agents/localfarm.py. It never imports Django: the server side runs in its
own processes, and a management command's answer is read from its stdout.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from farm.errors import FarmError

REPO_ROOT = Path(__file__).resolve().parent.parent


def manage_py(*args: str, env: dict[str, str]) -> str:
    """Run `manage.py ARGS` from the repository root with `env`; its stdout. Raises FarmError
    with the end of its stderr when it fails."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise FarmError(
            f"`manage.py {' '.join(args)}` failed:\n{done.stderr.strip()[-4000:]}",
            hint="the server's settings come from the environment (see .env.example)",
        )
    return done.stdout


def manage_json(*args: str, env: dict[str, str]) -> dict[str, Any]:
    """Run a management command that answers with one JSON object as its last line of stdout."""
    out = manage_py(*args, env=env)
    lines = out.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise FarmError(f"`manage.py {args[0]}` did not answer with a JSON object:\n{out[-2000:]}")
    return answer


class Processes:
    """Named child processes started in REPO_ROOT, each writing `<logs>/<name>.log`."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def spawn(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        with open(self.logs / f"{name}.log", "ab") as log:
            self.procs[name] = subprocess.Popen(
                argv,
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches the parent only; it stops each group
            )
        return self.procs[name]

    def check_alive(self) -> None:
        """Raises FarmError, with the end of their logs, when a process has stopped."""
        dead = {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}
        if dead:
            what = ", ".join(f"{n} (exit {rc})" for n, rc in dead.items())
            raise FarmError(f"farm process stopped: {what}", hint=self.log_tails(*dead))

    def log_tails(self, *names: str) -> str:
        """The last lines of the logs of `names` (default: every process)."""
        shown = []
        for name in names or tuple(self.procs):
            path = self.logs / f"{name}.log"
            tail = path.read_text(errors="replace").splitlines()[-15:] if path.exists() else []
            shown.append(f"--- {path} (last lines)\n" + "\n".join(tail))
        return "\n".join(shown)

    def stop(self, names: list[str], *, signals: tuple[int, ...], wait_s: float) -> None:
        """Send each of `signals` in turn to the processes `names`, then wait up to `wait_s`
        for them to exit."""
        procs = [self.procs[n] for n in names if n in self.procs]
        for sig in signals:
            for proc in procs:
                if proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(proc.pid, sig)
            if len(signals) > 1:
                time.sleep(0.3)
        deadline = time.monotonic() + wait_s
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))

    def kill_all(self) -> None:
        """SIGKILL what is left of every process group, and forget the processes."""
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        self.procs.clear()
