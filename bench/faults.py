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
- token-file: agent-a restarted as documented with FARM_NODE_TOKEN_FILE (no FARM_NODE_TOKEN),
  agent-b stopped: agent-a must evaluate the whole batch.
- freeze: agent-a (its whole session) is stopped with SIGSTOP during a run for three dead-node
  windows, then continued. Its lease expires, the run is measured again on agent-b, uncharged,
  with its true verdict; agent-a's late result is refused.
- disk-full: agent-a restarted with a work disk it sees as full (FARM_AGENT_MIN_FREE_MB above
  the free space): it must report itself unhealthy (DISK_FULL on the nodes API) and take no
  work; agent-b evaluates the batch.
- clock-skew: agent-a restarted with its clock two hours ahead (time.time shifted in every
  process it starts), agent-b stopped: agent-a must evaluate the whole batch.
- s3-hang-db-sources: S3 hangs during the whole batch, submitted while it hangs (the sources
  stay in the database): every run must finish while S3 still hangs; the artifacts wait in the
  database and are stored once S3 is back.
- sqlite-burst: a separate local farm on the embedded SQLite database (gunicorn, two workers,
  as `farm up` runs it) takes 50 submissions sent at once: none may answer 5xx or be lost.

Per scenario it prints: runs, done, lost (not done), duplicated (results recorded twice: a
finished run whose journal shows two `done` outcomes), attempts charged (attempts beyond the
first that count against the submission), uncharged (attempts that ended by a fault of a node
and were measured again), artifacts missing, 5xx (answers 500-599 other than 503 in the
server's access log: a 503 says "retry in a moment" while storage or the database is busy, and
its count goes to the notes; for the burst, every 5xx answer to a submission), and the seconds
the batch took. Exit status 1 when an invariant fails.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import re
import shutil
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

from bench import scratch_db  # noqa: E402
from bench.scratch_db import sql  # noqa: E402

BROKER = "redis://127.0.0.1:6379/11"
DEAD_AFTER_S = 6
SOURCE = (REPO / "tests" / "solutions" / "correct" / "vector_add__triton.py").read_text()
SKEW_S = 7200
SKEW = f"""import time as _t
_time, _time_ns = _t.time, _t.time_ns
_t.time = lambda: _time() + {SKEW_S}
_t.time_ns = lambda: _time_ns() + {SKEW_S} * 10**9
"""


ANSWER_5XX = re.compile(r'HTTP/\d\.\d" (5\d\d) ')  # a 5xx line of the access log


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
            with contextlib.suppress(OSError):  # wakes the thread blocked in accept()
                self.listener.shutdown(socket.SHUT_RDWR)
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

        self.database = scratch_db.create("farm_faults")
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
            "DATABASE_URL": f"{scratch_db.PG}/{self.database}",
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
        self.agent_env = {
            "FARM_SANDBOX": os.environ.get("FARM_SANDBOX", "bwrap"),
            "FARM_AGENT_MIN_FREE_MB": "64",
        }
        for name in ("agent-a", "agent-b"):
            self.farm.start_agent(name, **self.agent_env)
        self.workdir = workdir
        self.runs = runs
        self.batch = 0
        self.notes: list[str] = []

    def close(self) -> None:
        self.farm.stop()
        self.moto.terminate()
        self.moto.wait(timeout=10)
        scratch_db.drop(self.database)

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

    def restart_agent(self, name: str, **extra: str) -> None:
        if f"agent:{name}" in self.farm.procs:
            self.farm.kill_agent(name)
        self.farm.start_agent(name, **{**self.agent_env, **extra})

    def only_agent_a(self, **extra: str) -> None:
        """agent-b stopped, agent-a restarted with `extra` in its environment."""
        self.farm.kill_agent("agent-b")
        self.restart_agent("agent-a", **extra)

    def both_agents_back(self) -> None:
        self.restart_agent("agent-a")
        self.restart_agent("agent-b")

    def token_file(self) -> None:
        path = self.workdir / "agent-a.token"
        path.write_text(self.farm.tokens["nodes"]["agent-a"] + "\n")
        path.chmod(0o600)
        self.only_agent_a(FARM_NODE_TOKEN="", FARM_NODE_TOKEN_FILE=str(path))

    def clock_skew(self) -> None:
        skewed = self.workdir / "skew"
        skewed.mkdir(exist_ok=True)
        (skewed / "sitecustomize.py").write_text(SKEW)
        path = os.pathsep.join([str(skewed), str(REPO), os.environ.get("PYTHONPATH", "")])
        self.only_agent_a(PYTHONPATH=path.rstrip(os.pathsep))

    def disk_full(self) -> None:
        free_mb = shutil.disk_usage(self.workdir).free // 2**20
        self.restart_agent("agent-a", FARM_AGENT_MIN_FREE_MB=str(free_mb + 10**6))
        status = wait_for(lambda: self.node_status("agent-a", "unhealthy"), 120, "agent-a sick")
        self.notes.append(f"agent-a {status['status']}: {status['problems'][0]['code']}")

    def node_status(self, name: str, wanted: str) -> dict[str, Any] | None:
        nodes = {n["name"]: n for n in self.farm.api("GET", "/api/nodes/")}
        return nodes[name] if nodes[name]["status"] == wanted else None

    def freeze(self) -> None:
        run = wait_for(lambda: running_run(self.database, "agent-a"), 120, "a running run")
        proc = self.farm.procs["agent:agent-a"]
        os.killpg(proc.pid, signal.SIGSTOP)
        time.sleep(3 * DEAD_AFTER_S)
        os.killpg(proc.pid, signal.SIGCONT)
        self.notes.append(f"froze agent-a for {3 * DEAD_AFTER_S} s during run {run}")

    def s3_hang_whole_batch(self) -> None:
        self.proxy.set("hang")

    def s3_back(self) -> None:
        """S3 comes back after the batch finished; the artifacts waiting in the database are
        stored by the beat's sweep (every minute)."""
        waiting = self.pending_artifacts()
        self.proxy.set("pass")
        wait_for(lambda: self.pending_artifacts() == 0, 150, "the artifacts stored")
        self.notes.append(f"{waiting} artifacts waited in the database until S3 was back")

    def pending_artifacts(self) -> int:
        return int(
            sql(
                self.database,
                "SELECT count(*) FROM artifacts_artifact WHERE pending_data IS NOT NULL",
            )[0][0]
        )

    # --- the checks ----------------------------------------------------------------------

    def scenario(self, name: str) -> dict[str, Any]:
        nothing = lambda: None  # noqa: E731
        before, fault, after = {
            "slot-child-kill": (nothing, self.slot_child_kill, nothing),
            "agent-kill": (nothing, self.agent_kill, nothing),
            "web-outage": (nothing, self.web_outage, nothing),
            "broker-restart": (nothing, self.broker_restart, nothing),
            "s3-refused": (nothing, lambda: self.s3("refuse"), nothing),
            "s3-hang": (nothing, lambda: self.s3("hang"), nothing),
            "token-file": (self.token_file, nothing, self.both_agents_back),
            "freeze": (nothing, self.freeze, nothing),
            "disk-full": (self.disk_full, nothing, self.both_agents_back),
            "clock-skew": (self.clock_skew, nothing, self.both_agents_back),
            "s3-hang-db-sources": (self.s3_hang_whole_batch, nothing, self.s3_back),
        }[name]
        self.notes = []
        logged = self.server_log_size()
        before()
        started = time.monotonic()
        ids = self.submit()
        fault()
        states = self.farm.wait_runs(ids, timeout=300)
        seconds = round(time.monotonic() - started, 1)
        after()
        return {**self.row(name, ids, states, seconds), "5xx": self.server_5xx(since=logged)}

    def server_log_size(self) -> int:
        path = self.farm.workdir / "server.log"
        return path.stat().st_size if path.exists() else 0

    def server_5xx(self, *, since: int) -> int:
        """The answers 500-599 but 503 that the server's access log shows after byte `since`
        (runserver logs `"METHOD /path HTTP/1.1" status size`); 503s go to the notes."""
        with (self.farm.workdir / "server.log").open("rb") as f:
            f.seek(since)
            text = f.read().decode(errors="replace")
        codes = collections.Counter(int(c) for c in ANSWER_5XX.findall(text))
        if codes[503]:
            self.notes.append(f"{codes[503]} answers 503 (retry in a moment)")
        return sum(n for code, n in codes.items() if code != 503)

    def row(
        self, name: str, ids: list[int], states: dict[int, dict[str, Any]], seconds: float
    ) -> dict[str, Any]:
        done = [i for i, s in states.items() if s["state"] == "done" and s["verdict"] == "PASSED"]
        journals = {a: self.farm.journal(a) for a in ("agent-a", "agent-b")}
        outcomes = collections.Counter(
            e["run"]
            for j in journals.values()
            for e in j
            if e["status"] == "done" and e["run"] in ids
        )
        by_a = sql(
            self.database,
            "SELECT count(*) FROM runs_result x JOIN nodes_node n ON n.id = x.node_id "
            "WHERE n.name = 'agent-a' AND x.run_id = ANY(%s)",
            ids,
        )[0][0]
        rows = sql(
            self.database,
            "SELECT r.id, r.attempt, r.node_faults, count(a.id) FILTER (WHERE a.reported) "
            "FROM runs_run r LEFT JOIN artifacts_artifact a ON a.run_id = r.id "
            "AND a.attempt = r.attempt WHERE r.id = ANY(%s) GROUP BY r.id",
            ids,
        )
        return {
            "scenario": name,
            "runs": len(ids),
            "done": len(done),
            "lost": len(ids) - len(done),
            "duplicated": sum(1 for n in outcomes.values() if n > 1),
            "attempts charged": sum(max(0, attempt - faults - 1) for _, attempt, faults, _ in rows),
            "uncharged": sum(faults for _, _, faults, _ in rows),
            "artifacts missing": sum(1 for i, _, _, n in rows if i in done and n == 0),
            "by agent-a": by_a,
            "seconds": seconds,
            "notes": "; ".join(self.notes),
        }


def sqlite_burst(workdir: Path, count: int = 50) -> dict[str, Any]:
    """`count` submissions at once to a local farm on the embedded SQLite database."""
    from agents.localfarm import LocalFarm
    from farm.queues import local_broker_url

    var = workdir / "var"
    env = {
        "DATABASE_URL": f"sqlite:///{var / 'farm.sqlite3'}",
        "CELERY_BROKER_URL": local_broker_url(var),
        "FARM_S3_BUCKET": "",
        "FARM_QUOTA_RUNS_PER_HOUR": "100000",
        "FARM_AUDIT": "0",
    }
    farm = LocalFarm(workdir, env)
    try:
        farm.setup(nodes=["burst-node"], hardware=["npu-sim-v1"])
        farm.start_web(workers=2)
        farm.start_server_worker()
        started = time.monotonic()
        codes = _at_once(farm, count)
        seconds = round(time.monotonic() - started, 1)
        stored = len(farm.api("GET", "/api/runs/?hardware=npu-sim-v1")["results"])
    finally:
        farm.stop()
    return {
        "scenario": "sqlite-burst",
        "runs": count,
        "done": codes.count(201),
        "lost": count - stored,
        "duplicated": max(0, stored - count),
        "attempts charged": 0,
        "uncharged": 0,
        "artifacts missing": 0,
        "5xx": sum(1 for c in codes if c >= 500),
        "by agent-a": 0,
        "seconds": seconds,
        "notes": f"answers {dict(collections.Counter(codes))}; done = 201 Created, runs stored "
        f"{stored}",
    }


def _at_once(farm: Any, count: int) -> list[int]:
    """POST `count` submissions from `count` threads released together; their status codes."""
    import requests

    barrier = threading.Barrier(count)
    codes: list[int] = []
    headers = {"Authorization": f"Bearer {farm.tokens['user']}"}

    def one(i: int) -> None:
        body = {
            "problem": "vector_add",
            "hardware": ["npu-sim-v1"],
            "mode": "test",
            "source": SOURCE + f"\n# burst {i}\n",
        }
        barrier.wait()
        r = requests.post(farm.url + "/api/submissions/", json=body, headers=headers, timeout=120)
        codes.append(r.status_code)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return codes


def violations(row: dict[str, Any]) -> list[str]:
    keys = ("lost", "duplicated", "artifacts missing", "attempts charged", "5xx")
    found = [f"{k} = {row[k]}" for k in keys if row[k]]
    if row["scenario"] in ("token-file", "clock-skew") and row["by agent-a"] != row["runs"]:
        found.append(f"agent-a evaluated {row['by agent-a']} of {row['runs']} runs")
    if row["scenario"] == "disk-full" and row["by agent-a"]:
        found.append(f"the unhealthy agent-a evaluated {row['by agent-a']} runs")
    if row["scenario"] == "freeze" and not row["uncharged"]:
        found.append("the frozen agent's run was not measured again")
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
        "token-file",
        "freeze",
        "disk-full",
        "clock-skew",
        "s3-hang-db-sources",
        "sqlite-burst",
    ]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=4, help="runs per scenario")
    p.add_argument("--scenario", nargs="*", choices=all_scenarios, default=all_scenarios)
    p.add_argument("--workdir", type=Path, default=REPO / "var" / "bench-faults")
    args = p.parse_args()
    workdir = args.workdir / uuid.uuid4().hex[:8]
    on_farm = [s for s in args.scenario if s != "sqlite-burst"]
    rows: list[dict[str, Any]] = []
    if on_farm:
        bench = Bench(workdir, args.runs)
        try:
            for name in on_farm:
                rows.append(bench.scenario(name))
                print("  ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
        finally:
            bench.close()
    if "sqlite-burst" in args.scenario:
        rows.append(sqlite_burst(workdir / "sqlite"))
        print("  ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    print(table(rows))
    failed = [f"{row['scenario']}: {v}" for row in rows for v in violations(row)]
    for line in failed:
        print("FAILED", line)
    return 1 if failed else 0


COLUMNS = (
    "runs",
    "done",
    "lost",
    "duplicated",
    "attempts charged",
    "uncharged",
    "artifacts missing",
    "5xx",
    "seconds",
)


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as the Markdown table docs/operations.md carries."""
    lines = ["| scenario | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for row in rows:
        lines.append(f"| {row['scenario']} | " + " | ".join(str(row[c]) for c in COLUMNS) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
