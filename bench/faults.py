"""Fault injection on a whole local farm: every run must end exactly once, no outage of the server
may be charged to a run, and every finished run must have its artifacts.

    PYTHONPATH=. python3 bench/faults.py [--runs 4] [--scenario NAME ...]

The farm (agents.localfarm): the server, its Celery worker with beat (reaper, resends), two
npu-sim agents, PostgreSQL (a fresh database, dropped at the end), Redis (db 11) as the broker,
and a moto S3 server reached through a TCP proxy this script controls (pass, refuse, hang). The
dead-node window is short (FARM_NODE_DEAD_AFTER_S=6) so that outages outlast it quickly.

Scenarios (each on a fresh batch of `--runs` test-mode runs):
- slot-child-kill: kill -9 the Celery child evaluating a run while its agent stays up. The run
  must be released at once (SLOT_DIED, retried elsewhere), not left "running" until a reaper.
- agent-kill: kill -9 a whole agent (its session) during a run; the reaper requeues its runs.
- web-outage: the web server is down for twice the dead-node window while runs are running. No
  run may be marked LOST or spend an attempt; finished results are accepted when it is back.
- broker-restart: the broker loses its queues during the batch (its Redis database is flushed,
  as a restart without persistence does; Redis itself is shared and stays up).
- s3-refused / s3-hang: S3 refuses connections / accepts and never answers for 10 s right after
  the batch is submitted (claims read sources, agents upload artifacts meanwhile). No attempt
  may be spent and every artifact must arrive.

Per scenario it prints: runs, done, lost (not done), duplicated (results recorded twice: a
finished run whose journal shows two `done` outcomes), attempts charged (attempts beyond the
first), artifacts missing, and the seconds the batch took. Exit status 1 when an invariant fails.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
PG = os.environ.get("FARM_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
BROKER = "redis://127.0.0.1:6379/11"
DEAD_AFTER_S = 6
SOURCE = (REPO / "tests" / "solutions" / "correct" / "vector_add__triton.py").read_text()
SERVER_OUTAGES = {"web-outage", "s3-refused", "s3-hang", "broker-restart"}


class S3Proxy:
    """TCP proxy in front of the S3 server: `mode` is pass, refuse (nothing listens) or hang
    (connections are accepted and never answered)."""

    def __init__(self, upstream: int) -> None:
        self.upstream, self.port, self.mode = upstream, _free_port(), "pass"
        self.held: list[socket.socket] = []
        self.listener: socket.socket | None = None
        self._listen()

    def set(self, mode: str) -> None:
        self.mode = mode
        if mode == "refuse" and self.listener is not None:
            self.listener.close()
            self.listener = None
        elif mode != "refuse" and self.listener is None:
            self._listen()
        if mode == "pass":
            for conn in self.held:
                conn.close()
            self.held.clear()

    def _listen(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            if self.mode == "hang":
                self.held.append(conn)
                continue
            upstream = socket.create_connection(("127.0.0.1", self.upstream))
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(65536):
            dst.sendall(data)
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sql(database: str, query: str, *args: object) -> list[tuple]:
    import psycopg

    with psycopg.connect(f"{PG}/{database}", autocommit=True) as conn:
        cursor = conn.execute(query, args)
        return cursor.fetchall() if cursor.description else []


def wait_for(predicate, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if got := predicate():
            return got
        time.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}")


def running_run(database: str, node: str) -> int:
    rows = sql(
        database,
        "SELECT r.id FROM runs_run r JOIN nodes_node n ON n.id = r.node_id "
        "WHERE n.name = %s AND r.state = 'running' LIMIT 1",
        node,
    )
    return int(rows[0][0]) if rows else 0


def slot_child(agent_pid: int) -> int:
    """The prefork child of the agent's slot worker (agent -> agents.worker -> child)."""

    def children(pid: int) -> list[int]:
        path = Path(f"/proc/{pid}/task/{pid}/children")
        return [int(p) for p in path.read_text().split()] if path.exists() else []

    for worker in children(agent_pid):
        for child in children(worker):
            return child
    return 0


class Bench:
    def __init__(self, workdir: Path, runs: int) -> None:
        from agents.localfarm import LocalFarm

        self.database = f"farm_faults_{uuid.uuid4().hex[:8]}"
        sql("postgres", f'CREATE DATABASE "{self.database}"')
        self.moto_port = _free_port()
        self.moto = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.moto_port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: _connects(self.moto_port), 30, "moto")
        self.proxy = S3Proxy(self.moto_port)
        bucket = "farm-faults"
        _bucket(self.moto_port, bucket)
        subprocess.run(["redis-cli", "-n", "11", "flushdb"], check=True, capture_output=True)
        env = {
            "DATABASE_URL": f"{PG}/{self.database}",
            "CELERY_BROKER_URL": BROKER,
            "FARM_S3_BUCKET": bucket,
            "AWS_S3_ENDPOINT_URL": f"http://127.0.0.1:{self.proxy.port}",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "FARM_S3_TIMEOUT_S": "1",
            "FARM_S3_REQUEST_TIMEOUT_S": "1",
            "FARM_NODE_DEAD_AFTER_S": str(DEAD_AFTER_S),
            "FARM_RECEPTION_GAP_S": "3",
            "FARM_REAP_INTERVAL_S": "2",
            "FARM_RESEND_INTERVAL_S": "3",
            "FARM_RESEND_QUEUED_AFTER_S": "20",
            "FARM_MAX_ATTEMPTS": "3",
            "FARM_QUOTA_RUNS_PER_HOUR": "100000",
            "FARM_AUDIT": "0",
        }
        self.farm = LocalFarm(workdir, env)
        self.farm.setup(nodes=["agent-a", "agent-b"], hardware=["npu-sim-v1"])
        self.farm.start_server()
        self.farm.start_server_worker()
        self.agent_env = {"FARM_SANDBOX": os.environ.get("FARM_SANDBOX", "bwrap")}
        for name in ("agent-a", "agent-b"):
            self.farm.start_agent(name, **self.agent_env)
        self.runs = runs
        self.batch = 0

    def close(self) -> None:
        self.farm.stop()
        self.moto.terminate()
        self.moto.wait(timeout=10)
        with contextlib.suppress(Exception):
            sql(
                "postgres",
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                self.database,
            )
            sql("postgres", f'DROP DATABASE IF EXISTS "{self.database}"')

    def submit(self) -> list[int]:
        self.batch += 1
        return [
            self.farm.submit(
                SOURCE + f"\n# batch {self.batch} item {i}\n",
                problem="vector_add",
                hardware="npu-sim-v1",
            )
            for i in range(self.runs)
        ]

    # --- the faults ----------------------------------------------------------------------

    def slot_child_kill(self) -> None:
        wait_for(lambda: running_run(self.database, "agent-a"), 120, "a running run")
        child = slot_child(self.farm.procs["agent:agent-a"].pid)
        if child <= 1:
            raise RuntimeError("agent-a has no slot child to kill")
        os.kill(child, signal.SIGKILL)

    def agent_kill(self) -> None:
        wait_for(lambda: running_run(self.database, "agent-a"), 120, "a running run")
        self.farm.kill_agent("agent-a")
        time.sleep(0.5)
        self.farm.start_agent("agent-a", **self.agent_env)

    def web_outage(self) -> None:
        wait_for(lambda: running_run(self.database, "agent-a"), 120, "a running run")
        proc = self.farm.procs.pop("server")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        time.sleep(2 * DEAD_AFTER_S)
        self.farm.start_server()

    def broker_restart(self) -> None:
        wait_for(lambda: running_run(self.database, "agent-a"), 120, "a running run")
        subprocess.run(["redis-cli", "-n", "11", "flushdb"], check=True, capture_output=True)

    def s3(self, mode: str) -> None:
        self.proxy.set(mode)
        time.sleep(10)
        self.proxy.set("pass")

    # --- the checks ----------------------------------------------------------------------

    def scenario(self, name: str) -> dict[str, Any]:
        started = time.monotonic()
        fault = {
            "slot-child-kill": self.slot_child_kill,
            "agent-kill": self.agent_kill,
            "web-outage": self.web_outage,
            "broker-restart": self.broker_restart,
            "s3-refused": lambda: self.s3("refuse"),
            "s3-hang": lambda: self.s3("hang"),
        }[name]
        ids = self.submit()
        fault()
        states = self.farm.wait_runs(ids, timeout=300)
        done = [i for i, s in states.items() if s["state"] == "done" and s["verdict"] == "PASSED"]
        outcomes = collections.Counter(
            e["run"]
            for agent in ("agent-a", "agent-b")
            for e in self.farm.journal(agent)
            if e["status"] == "done" and e["run"] in ids
        )
        rows = sql(
            self.database,
            "SELECT r.id, r.attempt, count(a.id) FILTER (WHERE a.reported) FROM runs_run r "
            "LEFT JOIN artifacts_artifact a ON a.run_id = r.id AND a.attempt = r.attempt "
            "WHERE r.id = ANY(%s) GROUP BY r.id, r.attempt",
            ids,
        )
        return {
            "scenario": name,
            "runs": len(ids),
            "done": len(done),
            "lost": len(ids) - len(done),
            "duplicated": sum(1 for n in outcomes.values() if n > 1),
            "attempts charged": sum(attempt - 1 for _, attempt, _ in rows),
            "artifacts missing": sum(1 for i, _, n in rows if i in done and n == 0),
            "seconds": round(time.monotonic() - started, 1),
        }


def violations(row: dict[str, Any]) -> list[str]:
    found = [f"{k} = {row[k]}" for k in ("lost", "duplicated", "artifacts missing") if row[k]]
    if row["scenario"] in SERVER_OUTAGES and row["attempts charged"]:
        found.append(f"a server outage charged {row['attempts charged']} attempts")
    return found


def _connects(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


def _bucket(port: int, name: str) -> None:
    import boto3

    s3 = boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    s3.create_bucket(Bucket=name)


def main() -> int:
    all_scenarios = [
        "slot-child-kill",
        "agent-kill",
        "web-outage",
        "broker-restart",
        "s3-refused",
        "s3-hang",
    ]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=4, help="runs per scenario")
    p.add_argument("--scenario", nargs="*", choices=all_scenarios, default=all_scenarios)
    p.add_argument("--workdir", type=Path, default=REPO / "var" / "bench-faults")
    args = p.parse_args()
    bench = Bench(args.workdir / uuid.uuid4().hex[:8], args.runs)
    failed = []
    try:
        for name in args.scenario:
            row = bench.scenario(name)
            print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
            failed += [f"{name}: {v}" for v in violations(row)]
    finally:
        bench.close()
    for line in failed:
        print("FAILED", line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
