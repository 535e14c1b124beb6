"""A whole farm on one machine, as processes: the server (Django's development server), the
server's Celery worker with beat, and node agents. Used by the agent's integration tests and by
bench/dispatch.py and bench/agent_gpu_e2e.py.

This module starts programs and talks HTTP; like the rest of agents/ it never imports Django
(the server side runs in its own processes: the user and the nodes are made by the management
commands `user_tokens` and `create_node`, which answer with one JSON line).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests

from agents.config import REPO_ROOT
from farm.config import child_env
from farm.supervise import manage_json, manage_py


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=1.0)
            return
        except requests.RequestException:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


class LocalFarm:
    """`env` is the server's environment (DATABASE_URL, CELERY_BROKER_URL, FARM_* ...)."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = child_env(
            {
                "FARM_VAR_DIR": str(workdir / "var"),
                "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
                "PYTHONUNBUFFERED": "1",
                **env,
            }
        )
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.tokens: dict[str, Any] = {}

    # --- server --------------------------------------------------------------------------

    def setup(self, *, nodes: list[str], hardware: list[str]) -> None:
        """Migrate, load the suites, create a user (API token) and nodes (node tokens)."""
        manage_py("migrate", "--noinput", env=self.env)
        manage_py("sync_suites", env=self.env)
        users = manage_json("user_tokens", "bench", env=self.env)["users"]
        made = manage_json("create_node", *nodes, "--hardware", *hardware, "--json", env=self.env)
        self.tokens = {"user": users["bench"], "nodes": made["nodes"]}

    def start_server(self) -> None:
        self._start(
            "server",
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{self.port}"],
            self.env,
        )
        wait_http(self.url + "/api/")

    def start_web(self, *, workers: int = 2) -> None:
        """The web tier as `farm up` runs it: gunicorn with `workers` processes."""
        argv = [sys.executable, "-m", "gunicorn", "leaderboard.wsgi:application"]
        argv += ["--bind", f"127.0.0.1:{self.port}", "--workers", str(workers)]
        self._start("server", argv, self.env)
        wait_http(self.url + "/api/")

    def start_server_worker(self) -> None:
        """The server's own Celery worker with beat (reaper, resends, upkeep) on queue `server`."""
        argv = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "leaderboard",
            "worker",
            "--beat",
            "--schedule",
            str(self.workdir / "beat-schedule"),
            "--queues",
            "server",
            "--pool",
            "solo",
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            "WARNING",
        ]
        self._start("server-worker", argv, self.env)

    # --- agents --------------------------------------------------------------------------

    def agent_env(self, name: str, **extra: str) -> dict[str, str]:
        return {
            **self.env,
            "FARM_URL": self.url,
            "FARM_NODE_TOKEN": self.tokens["nodes"][name],
            "FARM_NODE_NAME": name,
            "FARM_HOME": str(self.workdir / "agents" / name),
            "FARM_AGENT_METRICS_PORT": "0",
            "FARM_NPU_SIM_BOARD_SIZES": "small",  # a test farm: simulated boards stay small
            "FARM_AGENT_JOURNAL": str(self.workdir / f"journal-{name}.jsonl"),
            **extra,
        }

    def start_agent(self, name: str, **extra: str) -> subprocess.Popen[bytes]:
        argv = [sys.executable, "-m", "agents", "--log-level", "WARNING"]
        return self._start(f"agent:{name}", argv, self.agent_env(name, **extra))

    def kill_agent(self, name: str) -> None:
        """SIGKILL the agent and every process of its session (a machine that dies)."""
        proc = self.procs.pop(f"agent:{name}")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def journal(self, name: str) -> list[dict[str, Any]]:
        path = self.workdir / f"journal-{name}.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    # --- the user's side -----------------------------------------------------------------

    def api(self, method: str, path: str, **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.tokens['user']}"}
        r = requests.request(method, self.url + path, headers=headers, timeout=30, **kw)
        r.raise_for_status()
        return r.json()

    def submit(self, source: str, *, problem: str, hardware: str, mode: str = "test") -> int:
        body = {"problem": problem, "source": source, "hardware": [hardware], "mode": mode}
        return int(self.api("POST", "/api/submissions/", json=body)["runs"][0]["id"])

    def run(self, run_id: int) -> dict[str, Any]:
        return dict(self.api("GET", f"/api/runs/{run_id}/"))

    def wait_runs(
        self, ids: list[int], timeout: float, *, stall_s: float | None = None
    ) -> dict[int, dict[str, Any]]:
        """Poll until every run is done or failed; returns the last states. Gives up after
        `timeout` seconds, or, with `stall_s`, once no run has ended for `stall_s` seconds
        (then `timeout` is only the outer bound): a slow host stretches a batch, a farm that
        stopped serving it does not end runs at all."""
        start = last_end = time.monotonic()
        states: dict[int, dict[str, Any]] = {}
        ended = 0
        while True:
            states = {i: self.run(i) for i in ids}
            now_ended = sum(s["state"] in ("done", "failed") for s in states.values())
            now = time.monotonic()
            if now_ended == len(ids):
                break
            if now_ended > ended:
                ended, last_end = now_ended, now
            if now - start > timeout or (stall_s is not None and now - last_end > stall_s):
                break
            time.sleep(1.0)
        return states

    def log_tails(self, lines: int = 15) -> str:
        """The last `lines` of each process's log, for a test's failure message."""
        parts = []
        for path in sorted(self.workdir.glob("*.log")):
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {path.name}\n" + "\n".join(tail))
        return "\n".join(parts)

    # --- plumbing ------------------------------------------------------------------------

    def _start(self, key: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = open(self.workdir / f"{key.replace(':', '-')}.log", "ab")  # noqa: SIM115
        proc = subprocess.Popen(
            argv, cwd=REPO_ROOT, env=env, stdout=log, stderr=log, start_new_session=True
        )
        self.procs[key] = proc
        return proc

    def stop(self) -> None:
        """Stop everything this farm started (its own processes only)."""
        for key, proc in list(self.procs.items()):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            self.procs.pop(key, None)
