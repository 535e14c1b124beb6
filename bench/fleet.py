#!/usr/bin/env python3
"""How many GPUs one server feeds: a fleet of simulated agents against one web + broker +
database host.

    PYTHONPATH=. python3 bench/fleet.py [--agents 32] [--runs 1500] [--eval-ms 200:600]
        [--web-workers 3] [--broker amqp] [--json OUT.json]

The server is the production shape on this machine: gunicorn (`--web-workers` processes), the
server's Celery worker with beat (reaper, resends), PostgreSQL (a fresh database, dropped at the
end) and RabbitMQ (`--broker amqp`, the default; `redis` for Redis db 12) as the broker, the
local artifact store. The agents are the real agent code (agents.worker's Celery task with the
agent's settings: acks late, prefetch 1; agents.job.JobRunner: claim, start, suite and source,
artifact upload, result post; agents.heartbeat), each a node of its own with one slot, `--agents`
of them spread over `--procs` processes (a Celery worker with a thread per agent). Only the
evaluation is simulated: it sleeps a time drawn uniformly from `--eval-ms` and answers with a
real result document (tests/fixtures/results) made to match the job (its hardware included), so
the server judges, stores and ranks it as any other.

Two phases. First the whole batch is submitted through the REST API (batches of FARM_MAX_BATCH
submissions: the submission rate). Then the agents start and drain it: runs per second sustained
(completions between 10 % and 90 % of the batch), the server's share of each run as an agent
sees it (the job's wall time minus the simulated evaluation: claim, start, source, upload, result
post; p50/p95), the CPU seconds per run of each server part (gunicorn, PostgreSQL backends, the
server's Celery worker, the broker; the agents apart), and exactly-once: every run done once, on
its first attempt, one result each, no job outcome twice. "GPUs fed" = runs per second x 3600 /
1000 (a GPU that makes 1,000 scores an hour); the part whose CPU per run is largest is where one
host saturates first.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import hashlib
import json
import os
import platform
import queue
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import scratch_db  # noqa: E402
from bench.loadgen import cpu_seconds, pct, processes  # noqa: E402
from bench.scratch_db import sql  # noqa: E402

BROKERS = {"amqp": "amqp://guest:guest@127.0.0.1:5672//", "redis": "redis://127.0.0.1:6379/12"}
HARDWARE = "nvidia-h100"  # the class the simulated agents serve (their slots sleep, no GPU)
TEMPLATE = ROOT / "tests" / "fixtures" / "results" / "passed_cpu_vector_add.json"
SOURCE = "import torch\n\n\ndef kernel(a, b):\n    return torch.add(a, b)\n"
SCORES_PER_GPU_HOUR = 1000.0


# --- the simulated agents (child processes) ----------------------------------------------


def agent_process(spec_path: str) -> int:
    """One process of simulated agents: a Celery worker with a thread per agent (node)."""
    from agents import worker
    from agents.client import ServerClient
    from agents.config import AgentConfig
    from agents.devices import Slot
    from agents.heartbeat import Heartbeat
    from agents.job import JobRunner

    spec = json.loads(Path(spec_path).read_text())
    template = json.loads(TEMPLATE.read_text())
    lo, hi = spec["eval_s"]
    rng = random.Random(spec["seed"])
    rng_lock = threading.Lock()

    def evaluate(source_path: str | Path, **options: Any) -> dict[str, Any]:
        """The device's time, drawn; a real document made to match the job."""
        with rng_lock:
            seconds = rng.uniform(lo, hi)
        time.sleep(seconds)
        doc = copy.deepcopy(template)
        source = Path(source_path).read_bytes()
        doc["submission"] = {**doc["submission"], "sha256": hashlib.sha256(source).hexdigest()}
        doc["suite"] = {"name": "core-v1", "hash": spec["suite_hash"]}
        doc["problem"], doc["mode"] = options["problem"], options["mode"]
        doc["hardware"], doc["device"] = HARDWARE, "cuda"
        doc["logs"] = {"worker_stderr": f"simulated evaluation of {seconds:.3f} s\n"}
        return doc

    runners: queue.Queue[JobRunner] = queue.Queue()
    beats = []
    for name, token in spec["nodes"]:
        cfg = AgentConfig(
            server_url=spec["url"],
            node_token=token,
            node_name=name,
            home=Path(spec["home"]) / name,
            broker_url=spec["broker"],
            sandbox="process",
            metrics_port=0,
        )
        client = ServerClient(cfg.server_url, token, timeout_s=30.0, attempts=5, backoff_s=0.5)
        slot = Slot(0, HARDWARE, "cuda", 0, "simulated")
        runner = JobRunner(cfg, client, slot, evaluate=evaluate, selftest=lambda *a, **k: [])
        runners.put(runner)
        beats.append(Heartbeat(client, [slot], runner.state_dir))
    mine = threading.local()

    def thread_runner() -> JobRunner:
        if not hasattr(mine, "runner"):
            mine.runner = runners.get_nowait()  # one node per Celery thread
        return mine.runner

    def heartbeat() -> None:
        while True:
            for beat in beats:
                beat.process_one()
            time.sleep(spec["heartbeat_s"])

    # A beat that learns a run is no longer its node's sends the slot SIGUSR2 (agents.heartbeat
    # .stop_runs; the slot's handler stops the job). Here every slot is a thread of this one
    # process: the signal must not end it, and the job ends on its own (its result refused).
    signal.signal(signal.SIGUSR2, lambda _sig, _frame: None)
    threading.Thread(target=heartbeat, daemon=True).start()
    worker.runner = thread_runner  # the task (agents.worker.evaluate_run) finds its node's runner
    app = worker.make_app(spec["broker"])
    app.worker_main(
        [
            "worker",
            "--queues",
            Slot(0, HARDWARE, "cuda", 0, "simulated").queue,
            "--pool",
            "threads",
            "--concurrency",
            str(len(spec["nodes"])),
            "--hostname",
            f"fleet-{spec['index']}@bench",
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            "WARNING",
        ]
    )
    return 0


# --- the bench ---------------------------------------------------------------------------


class Fleet:
    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        from agents.localfarm import LocalFarm

        self.args, self.workdir = args, workdir
        self.database = scratch_db.create("farm_fleet")
        self.broker = BROKERS[args.broker]
        if args.broker == "redis":
            subprocess.run(["redis-cli", "-n", "12", "flushdb"], check=True, capture_output=True)
        env = {
            "DATABASE_URL": f"{scratch_db.PG}/{self.database}",
            "CELERY_BROKER_URL": self.broker,
            "FARM_QUOTA_RUNS_PER_HOUR": "10000000",
            "FARM_AUDIT": "0",
            "FARM_LOG_LEVEL": "WARNING",
        }
        self.farm = LocalFarm(workdir, env)
        self.nodes = [f"fleet-{i:03d}" for i in range(args.agents)]
        self.agents: list[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        self.farm.setup(nodes=self.nodes, hardware=[HARDWARE])
        self._purge()
        self.farm.start_web(workers=self.args.web_workers)
        self.farm.start_server_worker()

    def _purge(self) -> None:
        """Leftovers of an earlier run on the shared broker would be claimed by nobody here."""
        from celery import Celery

        from farm.queues import hardware_queue

        app = Celery("fleet-purge", broker=self.broker)
        with app.connection_for_write() as conn:
            for name in (hardware_queue(HARDWARE), "server"):
                with contextlib.suppress(Exception):
                    conn.default_channel.queue_purge(name)

    def submit(self, count: int) -> tuple[list[int], float]:
        """`count` distinct submissions (one run each), in batches; (run ids, seconds)."""
        batch_size = int(os.environ.get("FARM_MAX_BATCH", "200"))
        ids: list[int] = []
        t0 = time.monotonic()
        for start in range(0, count, batch_size):
            items = [
                {
                    "problem": "vector_add",
                    "hardware": [HARDWARE],
                    "mode": "benchmark",
                    "source": SOURCE + f"# candidate {i}\n",
                }
                for i in range(start, min(count, start + batch_size))
            ]
            answer = self.farm.api("POST", "/api/submissions/", json={"submissions": items})
            ids += [int(s["runs"][0]["id"]) for s in answer["submissions"]]
        return ids, time.monotonic() - t0

    def start_agents(self) -> None:
        tokens = self.farm.tokens["nodes"]
        procs = max(1, min(self.args.procs, len(self.nodes)))
        for p in range(procs):
            nodes = [[n, tokens[n]] for n in self.nodes[p::procs]]
            spec = {
                "index": p,
                "nodes": nodes,
                "url": self.farm.url,
                "broker": self.broker,
                "home": str(self.workdir / "agents"),
                "eval_s": [self.args.eval_lo / 1e3, self.args.eval_hi / 1e3],
                "seed": p,
                "suite_hash": self.suite_hash(),
                "heartbeat_s": 10.0,
            }
            path = self.workdir / f"agents-{p}.json"
            path.write_text(json.dumps(spec))
            env = {
                **self.farm.env,
                "FARM_AGENT_JOURNAL": str(self.workdir / f"journal-{p}.jsonl"),
                "PYTHONPATH": str(ROOT),
            }
            log = open(self.workdir / f"agents-{p}.log", "ab")  # noqa: SIM115
            self.agents.append(
                subprocess.Popen(
                    [sys.executable, __file__, "--agent-proc", str(path)],
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                )
            )

    @staticmethod
    def suite_hash() -> str:
        from farm.suite.loader import load_suite

        return load_suite("core-v1").hash

    def done_count(self, ids: list[int]) -> int:
        rows = sql(
            self.database,
            "SELECT count(*) FROM runs_run WHERE id = ANY(%s) AND state = 'done'",
            ids,
        )
        return int(rows[0][0])

    def journal(self) -> list[dict[str, Any]]:
        out = []
        for path in sorted(self.workdir.glob("journal-*.jsonl")):
            out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return out

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far of each part of the server, of the agents, and of the machine."""
        procs = processes()
        children: dict[int, list[int]] = {}
        for pid, ppid, _ in procs:
            children.setdefault(ppid, []).append(pid)

        def tree(pid: int) -> float:
            return cpu_seconds(pid) + sum(tree(c) for c in children.get(pid, []))

        tag = f" {self.database} ".encode()
        backends = [pid for pid, _, cmd in procs if cmd.startswith(b"postgres: ") and tag in cmd]
        broker = [pid for pid, _, cmd in procs if b"beam.smp" in cmd or b"redis-server" in cmd]
        busy = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return {
            "wall": time.monotonic(),
            "web (gunicorn)": tree(self.farm.procs["server"].pid),
            "database (postgres backends)": sum(cpu_seconds(p) for p in backends),
            "server worker (celery)": tree(self.farm.procs["server-worker"].pid),
            "broker": sum(cpu_seconds(p) for p in broker),
            "agents (simulated)": sum(tree(a.pid) for a in self.agents),
            "machine": (sum(busy) - busy[3] - busy[4]) / os.sysconf("SC_CLK_TCK"),
        }

    def close(self) -> None:
        for proc in self.agents:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        self.farm.stop()
        scratch_db.drop(self.database)


def drain(fleet: Fleet, ids: list[int], timeout_s: float) -> dict[str, Any]:
    """Start the agents, sample completions and CPU until the batch is done (or the timeout)."""
    fleet.start_agents()
    samples: list[tuple[float, int, dict[str, float]]] = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        done = fleet.done_count(ids)
        samples.append((time.monotonic() - t0, done, fleet.cpu()))
        if done >= len(ids):
            break
        time.sleep(1.0)
    n = len(ids)
    lo = next((s for s in samples if s[1] >= 0.1 * n), samples[0])
    hi = next((s for s in samples if s[1] >= 0.9 * n), samples[-1])
    steady_runs = hi[1] - lo[1]
    steady_s = max(hi[0] - lo[0], 1e-9)
    cpu_per_run = {
        k: (hi[2][k] - lo[2][k]) / max(steady_runs, 1) for k in hi[2] if k not in ("wall",)
    }
    return {
        "done": samples[-1][1],
        "drain_s": samples[-1][0],
        "steady_runs": steady_runs,
        "steady_s": steady_s,
        "runs_per_s": steady_runs / steady_s,
        "cpu_s_per_run": cpu_per_run,
        "machine_busy_pct": 100.0 * (hi[2]["machine"] - lo[2]["machine"]) / steady_s / cpu_count(),
    }


def cpu_count() -> int:
    return len(os.sched_getaffinity(0))


def exactly_once(fleet: Fleet, ids: list[int], journal: list[dict[str, Any]]) -> dict[str, int]:
    rows = sql(
        fleet.database,
        "SELECT r.id, r.state, r.attempt, (SELECT count(*) FROM runs_result j WHERE j.run_id = "
        "r.id) FROM runs_run r WHERE r.id = ANY(%s)",
        ids,
    )
    done_outcomes: dict[int, int] = {}
    for entry in journal:
        if entry.get("status") == "done":
            done_outcomes[entry["run"]] = done_outcomes.get(entry["run"], 0) + 1
    return {
        "runs": len(ids),
        "not done": sum(1 for r in rows if r[1] != "done"),
        "attempts beyond the first": sum(max(0, (r[2] or 0) - 1) for r in rows),
        "results not exactly one": sum(1 for r in rows if r[3] != 1),
        "done twice in the journals": sum(1 for c in done_outcomes.values() if c > 1),
    }


def overhead(journal: list[dict[str, Any]]) -> dict[str, float]:
    """The server's share of each job as its agent saw it: wall - simulated evaluation (s)."""
    rest = [
        e["timings"]["total"] - e["timings"]["evaluate"] for e in journal if e["status"] == "done"
    ]
    if not rest:
        return {}
    steps = {
        k: statistics.median(e["timings"][k] for e in journal if e["status"] == "done")
        for k in ("claim", "prepare", "upload", "report")
    }
    return {"p50_ms": 1e3 * pct(rest, 50), "p95_ms": 1e3 * pct(rest, 95)} | {
        f"{k}_p50_ms": 1e3 * v for k, v in steps.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=32)
    parser.add_argument("--procs", type=int, default=4, help="processes the agents share")
    parser.add_argument("--runs", type=int, default=1500)
    parser.add_argument("--eval-ms", default="200:600", help="LO:HI simulated evaluation (ms)")
    parser.add_argument("--web-workers", type=int, default=3)
    parser.add_argument("--broker", choices=sorted(BROKERS), default="amqp")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds for the drain")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--agent-proc", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.agent_proc:
        return agent_process(args.agent_proc)
    args.eval_lo, args.eval_hi = (float(x) for x in args.eval_ms.split(":"))
    import tempfile

    with tempfile.TemporaryDirectory(prefix="farm-fleet-") as tmp:
        fleet = Fleet(args, Path(tmp))
        try:
            fleet.start()
            ids, submit_s = fleet.submit(args.runs)
            drained = drain(fleet, ids, args.timeout)
            journal = fleet.journal()
            once = exactly_once(fleet, ids, journal)
            agent_side = overhead(journal)
        finally:
            fleet.close()
    out = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": {"cpus": cpu_count(), "python": platform.python_version()},
        "args": {k: v for k, v in vars(args).items() if k != "json"},
        "submissions_per_s": args.runs / submit_s,
        **drained,
        "gpus_fed": drained["runs_per_s"] * 3600 / SCORES_PER_GPU_HOUR,
        "agent_side_overhead": agent_side,
        "exactly_once": once,
    }
    print(table(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    broken = {k: v for k, v in once.items() if k != "runs" and v}
    return 1 if broken else 0


def table(out: dict[str, Any]) -> str:
    a = out["args"]
    lines = [
        f"{a['agents']} agents in {a['procs']} processes, {a['runs']} runs, evaluation "
        f"{a['eval_ms']} ms, {a['web_workers']} web workers, broker {a['broker']}, "
        f"{out['machine']['cpus']} CPUs",
        f"submissions: {out['submissions_per_s']:.1f}/s through the batch API",
        f"drain: {out['done']} done in {out['drain_s']:.0f} s; steady {out['runs_per_s']:.1f} "
        f"runs/s ({out['steady_runs']} runs in {out['steady_s']:.0f} s), machine busy "
        f"{out['machine_busy_pct']:.0f} %",
        f"GPUs fed at {SCORES_PER_GPU_HOUR:.0f} scores/h each: {out['gpus_fed']:.0f}",
        "server share of a job, agent side: "
        + ", ".join(f"{k} {v:.0f}" for k, v in out["agent_side_overhead"].items()),
        "CPU ms per run: "
        + ", ".join(f"{k} {1e3 * v:.1f}" for k, v in out["cpu_s_per_run"].items()),
        "exactly once: " + ", ".join(f"{k} {v}" for k, v in out["exactly_once"].items()),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
