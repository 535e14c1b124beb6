"""Dispatch figures for docs/dispatch.md.

    python3 bench/dispatch.py throughput [--jobs 2000 --agents 8]   # broker only
    python3 bench/dispatch.py overhead   [--runs 6]                 # one warm npu-sim agent

throughput: jobs per second through the broker. The publisher sends `farm.agent.evaluate_run`
by name to queue `hw.bench` exactly as the server does (Celery send_task); `--agents` simulated
agents (Celery workers with the agent's settings: acks late, prefetch 1, one prefork child each)
take the jobs and do no work but acknowledge them; each job increments a Redis counter. Jobs/s =
jobs / (first send to last job done).

overhead: a local farm (SQLite, the broker of CELERY_BROKER_URL, default Redis db 10) with one
npu-sim agent evaluates honest kernels in benchmark mode, one at a time, on a warm node (the
first run, which warms the caches, is left out). Per run the agent's journal gives the wall time
of every step; overhead = job wall time - (correctness + timing), i.e. everything that is not
the measurement itself: claim, suite and source, sandbox start, compile, artifact upload, result
post. Queue wait is reported apart.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BROKER = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/10")
COUNTER = "bench:dispatch:done"
QUEUE = "hw.bench"


def bench_app():  # type: ignore[no-untyped-def]
    """A simulated agent: the agent's Celery settings, a task that only counts."""
    import redis
    from celery import Celery

    app = Celery("bench-agent", broker=BROKER)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        worker_hijack_root_logger=False,
    )
    counter = redis.Redis.from_url(BROKER)

    @app.task(name="farm.agent.evaluate_run")
    def evaluate_run(run_id: int, **_: object) -> None:
        counter.incr(COUNTER)

    return app


def throughput(jobs: int, agents: int) -> dict:
    import redis
    from celery import Celery

    r = redis.Redis.from_url(BROKER)
    r.delete(COUNTER, QUEUE)
    workers = [
        subprocess.Popen(
            [sys.executable, __file__, "_worker", str(i)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i in range(agents)
    ]
    try:
        time.sleep(6.0)  # let the workers connect
        sender = Celery("bench-server", broker=BROKER)
        started = time.perf_counter()
        for i in range(jobs):
            sender.send_task("farm.agent.evaluate_run", args=[i], queue=QUEUE)
        sent = time.perf_counter() - started
        while int(r.get(COUNTER) or 0) < jobs:
            if time.perf_counter() - started > 300:
                raise SystemExit(f"only {int(r.get(COUNTER) or 0)} of {jobs} jobs done in 300 s")
            time.sleep(0.01)
        elapsed = time.perf_counter() - started
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.wait(timeout=30)
    return {
        "jobs": jobs,
        "agents": agents,
        "send_per_s": round(jobs / sent, 1),
        "jobs_per_s": round(jobs / elapsed, 1),
        "seconds": round(elapsed, 2),
    }


def overhead(runs: int, sandbox: str) -> dict:
    from agents.localfarm import LocalFarm

    kernels = [
        ("vector_add", "vector_add__triton.py"),
        ("softmax", "softmax__triton.py"),
        ("rmsnorm", "rmsnorm__triton.py"),
    ]
    work = Path(tempfile.mkdtemp(prefix="farm-dispatch-"))
    farm = LocalFarm(
        work,
        {"DATABASE_URL": f"sqlite:///{work / 'db.sqlite3'}", "CELERY_BROKER_URL": BROKER},
    )
    try:
        farm.setup(nodes=["bench"], hardware=["npu-sim-v1"])
        farm.start_server()
        farm.start_agent("bench", FARM_SANDBOX=sandbox)
        rows = []
        for i in range(runs + 1):  # one at a time: a warm node, no queueing behind other runs
            problem, file = kernels[i % len(kernels)]
            source = (REPO / "tests/solutions/correct" / file).read_text() + f"\n# {i}\n"
            run = farm.submit(source, problem=problem, hardware="npu-sim-v1", mode="benchmark")
            state = farm.wait_runs([run], timeout=300)[run]
            if state["state"] != "done":
                raise SystemExit(f"run {run} ended {state['state']} {state['failure_code']}")
            rows.append(run)
        journal = {j["run"]: j for j in farm.journal("bench") if j["status"] == "done"}
        timings = [journal[r]["timings"] for r in rows[1:]]
    finally:
        farm.stop()
    return summarise(timings)


def summarise(timings: list[dict]) -> dict:
    def med(values: list[float]) -> float:
        return round(statistics.median(values), 3)

    measured = [t["phases"]["correctness"] + t["phases"]["timing"] for t in timings]
    overheads = [t["total"] - m for t, m in zip(timings, measured)]
    out = {
        "runs": len(timings),
        "total_s": med([t["total"] for t in timings]),
        "measurement_s": med(measured),
        "overhead_s": med(overheads),
        "overhead_max_s": round(max(overheads), 3),
        "overhead_each_s": [round(o, 2) for o in overheads],
        "queue_wait_s": med([t["queue_wait"] or 0.0 for t in timings]),
    }
    for key in ("claim", "prepare", "upload", "report"):
        out[f"{key}_s"] = med([t[key] for t in timings])
    for key in ("sandbox_start", "compile", "correctness", "timing"):
        out[f"{key}_s"] = med([t["phases"][key] for t in timings])
    return out


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "_worker":
        app = bench_app()
        app.worker_main(
            [
                "worker",
                "-Q",
                QUEUE,
                "-P",
                "prefork",
                "-c",
                "1",
                "-n",
                f"sim{sys.argv[2]}@bench",
                "--without-gossip",
                "--without-mingle",
                "-l",
                "WARNING",
            ]
        )
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    t = sub.add_parser("throughput")
    t.add_argument("--jobs", type=int, default=2000)
    t.add_argument("--agents", type=int, default=8)
    o = sub.add_parser("overhead")
    o.add_argument("--runs", type=int, default=6)
    o.add_argument("--sandbox", default="bwrap")
    args = p.parse_args()
    if args.what == "throughput":
        print(throughput(args.jobs, args.agents))
    else:
        print(overhead(args.runs, args.sandbox))
    return 0


if __name__ == "__main__":
    sys.exit(main())
