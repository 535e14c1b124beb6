"""A server, its Celery worker (beat: reaper, resends) and two npu-sim agents on the real Redis
broker and PostgreSQL evaluate a batch of honest kernels through the sandbox (bwrap), while the
test kills -9 an agent at several points of a run, restarts the broker (without persistence: its
queues are lost) and cuts the server's database connections. Every run must end exactly once:
done, PASSED, one result, never two accepted reports.

The database is a fresh one created and dropped here; PostgreSQL itself is not stopped (other
work shares it): its connections are terminated instead. The broker is a Redis server of this
test's own on a free port (the machine's Redis, which other tests share, is left alone); it is
restarted, always brought back in a `finally`, and stopped at the end.
"""

from __future__ import annotations

import collections
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from agents.localfarm import free_port

pytestmark = pytest.mark.slow

psycopg = pytest.importorskip("psycopg")
REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "tests" / "solutions" / "correct"
KERNELS = [
    ("vector_add", "vector_add__triton.py"),
    ("softmax", "softmax__triton.py"),
    ("rmsnorm", "rmsnorm__triton.py"),
    ("silu", "silu__triton.py"),
    ("gelu", "gelu__triton.py"),
]
PG = "postgresql://postgres@127.0.0.1:5432"


@dataclass(frozen=True)
class Redis:
    """A redis-server of the test's own: no persistence, so a restart loses the queues."""

    port: int
    home: Path

    def cli(self, *args: str) -> str:
        cmd = ["redis-cli", "-p", str(self.port), *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()

    def up(self) -> bool:
        return self.cli("ping") == "PONG"

    def start(self) -> None:
        subprocess.run(
            ["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1",
             "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--dir", str(self.home), "--logfile", str(self.home / "redis.log")],
            check=True,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while not self.up() and time.monotonic() < deadline:
            time.sleep(0.1)

    def stop(self) -> None:
        self.cli("shutdown", "nosave")


def restart_redis(redis: Redis, down_s: float) -> None:
    redis.stop()
    try:
        time.sleep(down_s)
    finally:
        if not redis.up():
            redis.start()


@pytest.fixture
def redis(tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    server = Redis(free_port(), tmp_path / "redis")
    server.home.mkdir()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def database():
    name = f"farm_agents_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (name,),
            )
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


@pytest.fixture
def farm(database, redis, tmp_path):
    from agents.localfarm import LocalFarm

    env = {
        "DATABASE_URL": f"{PG}/{database}",
        "DATABASE_CONN_MAX_AGE": "60",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis.port}/0",
        "FARM_NODE_DEAD_AFTER_S": "6",
        "FARM_REAP_INTERVAL_S": "2",
        "FARM_RESEND_INTERVAL_S": "3",
        "FARM_RESEND_QUEUED_AFTER_S": "20",
        "FARM_MAX_ATTEMPTS": "6",
        "FARM_QUOTA_RUNS_PER_HOUR": "1000",
    }
    lf = LocalFarm(tmp_path / "farm", env)
    lf.setup(nodes=["agent-a", "agent-b"], hardware=["npu-sim-v1"])
    lf.start_server()
    lf.start_server_worker()
    try:
        yield lf
    finally:
        lf.stop()


def sql(database: str, query: str, *args: object) -> list[tuple]:
    with psycopg.connect(f"{PG}/{database}", autocommit=True) as conn:
        return conn.execute(query, args).fetchall()


def node_id(database: str, name: str) -> int:
    return int(sql(database, "SELECT id FROM nodes_node WHERE name = %s", name)[0][0])


def wait_for(predicate, timeout: float, what: str):  # type: ignore[no-untyped-def]
    """Poll `predicate`; the timeouts below are generous because a loaded 2-core host takes
    minutes to start an agent's slots, and only a farm that never gets there fails."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def submit_batch(farm, n: int, offset: int = 0) -> list[int]:  # type: ignore[no-untyped-def]
    ids = []
    for i in range(n):
        problem, file = KERNELS[(i + offset) % len(KERNELS)]
        # a distinct comment per submission: distinct sources, like a real batch
        source = (SOLUTIONS / file).read_text() + f"\n# batch item {offset + i}\n"
        ids.append(farm.submit(source, problem=problem, hardware="npu-sim-v1"))
    return ids


def held_by(database: str, node: int, state: str, for_s: float = 0.0) -> int | None:
    rows = sql(
        database,
        "SELECT id FROM runs_run WHERE node_id = %s AND state = %s "
        "AND COALESCE(started_at, claimed_at) < now() - make_interval(secs => %s) LIMIT 1",
        node,
        state,
        for_s,
    )
    return int(rows[0][0]) if rows else None


# The waits below follow progress, so a loaded host stretches the test past the suite's
# default limit; a farm that stops ending runs still fails within stall_s.
@pytest.mark.timeout(1500)
def test_batch_survives_agent_kills_broker_restart_and_db_cuts(farm, database, redis):
    agent_env = {"FARM_SANDBOX": "bwrap"}
    farm.start_agent("agent-a", **agent_env)
    farm.start_agent("agent-b", **agent_env)
    a = node_id(database, "agent-a")
    ids = submit_batch(farm, 8)

    # kill -9 agent-a: just after a claim, early in a run, late in a run
    killed_runs = []
    # "claimed" lasts only until the agent starts the run (a fraction of a second on a warm
    # node), so the first kill takes a run that is claimed or has only just started.
    points = ((("claimed", "running"), 0.0), (("running",), 1.0), (("running",), 3.5))
    for states, after_s in points:
        run = wait_for(
            lambda ss=states, t=after_s: next(
                (r for st in ss if (r := held_by(database, a, st, t)) is not None), None
            ),
            240,
            f"{'/'.join(states)} run",
        )
        farm.kill_agent("agent-a")
        killed_runs.append(run)
        time.sleep(0.5)
        farm.start_agent("agent-a", **agent_env)

    # the broker goes away (losing its queues) while runs are queued and running
    ids += submit_batch(farm, 4, offset=8)
    wait_for(lambda: sql(database, "SELECT 1 FROM runs_run WHERE state='running'"), 240, "a run")
    restart_redis(redis, down_s=3.0)

    # the server's database connections are cut during the batch
    ids += submit_batch(farm, 3, offset=12)
    wait_for(lambda: sql(database, "SELECT 1 FROM runs_run WHERE state='running'"), 240, "a run")
    sql(
        database,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )

    # Recovery, not speed, is under test: each evaluation takes 10-30 s on a loaded 2-core host
    # and the two agents run one at a time, so the wait ends when no run has ended for 150 s
    # (a farm that lost runs), not at a fixed time that a busy CI host outlasts.
    states = farm.wait_runs(ids, timeout=900, stall_s=150)
    not_done = {
        i: (s["state"], s["failure_code"]) for i, s in states.items() if s["state"] != "done"
    }
    assert not not_done, f"runs not done: {not_done}\n{farm.log_tails()}"
    assert {s["verdict"] for s in states.values()} == {"PASSED"}
    results = sql(database, "SELECT run_id, count(*) FROM runs_result GROUP BY run_id")
    assert sorted(r for r, _ in results) == sorted(ids)
    # no run was reported done twice (a second accepted post would show as a second "done")
    done = collections.Counter(
        j["run"]
        for name in ("agent-a", "agent-b")
        for j in farm.journal(name)
        if j["status"] == "done"
    )
    assert max(done.values()) == 1, done
    # the killed runs were taken back and run again under a new attempt
    attempts = {i: states[i]["attempt"] for i in killed_runs}
    assert all(n >= 2 for n in attempts.values()), attempts
