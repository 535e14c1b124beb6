"""Scored evaluations per hour through farm.client, against a local farm with npu-sim agents.

    python3 bench/client_throughput.py [--agents 4 --slots 1 --count 64 --modes test,benchmark]

Starts a local farm as subprocesses (agents.localfarm: Django's server on SQLite, the server's
Celery worker, `--agents` node agents serving npu-sim-v1 with `--slots` evaluations each), warms
every agent with one run, then submits `--count` generated kernels (examples/rl_kernels) in one
batch through FarmClient.submit_batch and reads them with FarmClient.as_completed. A run is
scored when it ends `done` with a verdict. Throughput = scored runs / (submit -> last result).
Writes docs/client-throughput.md (with --doc) and prints the same table. When the server or
the agents are not in this checkout, it says what is missing and exits 2.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "examples")]
BROKER = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/11")
HW = "npu-sim-v1"
DOC = REPO / "docs" / "client-throughput.md"


def missing() -> list[str]:
    needed = {
        "the server (manage.py, leaderboard/)": REPO / "manage.py",
        "the node agent (agents/)": REPO / "agents" / "__main__.py",
        "the local farm helper (agents/localfarm.py)": REPO / "agents" / "localfarm.py",
    }
    return [what for what, path in needed.items() if not path.exists()]


def start_farm(work: Path, agents: int, slots: int):  # type: ignore[no-untyped-def]
    from agents.localfarm import LocalFarm

    env = {
        "DATABASE_URL": f"sqlite:///{work / 'db.sqlite3'}",
        "CELERY_BROKER_URL": BROKER,
        "FARM_QUOTA_RUNS_PER_HOUR": "1000000",
        # a broker restarted under us loses queued jobs: the server re-sends them soon
        "FARM_RESEND_INTERVAL_S": "10",
        "FARM_RESEND_QUEUED_AFTER_S": "60",
    }
    farm = LocalFarm(work, env)
    names = [f"sim-{i}" for i in range(agents)]
    farm.setup(nodes=names, hardware=[HW])
    farm.start_server()
    farm.start_server_worker()
    for name in names:
        farm.start_agent(
            name,
            FARM_SANDBOX="process",
            FARM_ALLOW_UNSANDBOXED="1",
            FARM_NPU_SIM_SLOTS=str(slots),
            FARM_AGENT_DEVICES=HW,
        )
    return farm, names


def warm_up(client, agents: int, timeout_s: float) -> float:  # type: ignore[no-untyped-def]
    """One run per agent (caches, imports); returns its wall time in seconds."""
    from rl_kernels.generate import candidates

    from farm.client import SubmitRequest

    started = time.monotonic()
    warm = [c for c in candidates(agents * 4, seed=1) if c.correct][:agents]
    subs = client.submit_batch(
        [SubmitRequest(c.source, c.problem, [HW], mode="test") for c in warm]
    )
    client.wait(subs, timeout_s=timeout_s)
    return time.monotonic() - started


def measure(client, count: int, mode: str, timeout_s: float) -> dict:  # type: ignore[no-untyped-def]
    from rl_kernels.generate import candidates

    from farm.client import SubmitRequest

    batch = candidates(count, seed=int(time.time()))
    started = time.monotonic()
    subs = client.submit_batch([SubmitRequest(c.source, c.problem, [HW], mode=mode) for c in batch])
    submitted = time.monotonic() - started
    finish, verdicts, states = [], Counter(), Counter()
    for run in client.as_completed(subs, timeout_s=timeout_s):
        finish.append(time.monotonic() - started)
        states[run.state] += 1
        verdicts[run.verdict or run.failure_code or "none"] += 1
    wall = max(finish)
    scored = states["done"]
    return {
        "count": count,
        "mode": mode,
        "submit_s": submitted,
        "wall_s": wall,
        "scored": scored,
        "per_hour": scored / wall * 3600,
        "median_latency_s": statistics.median(finish),
        "verdicts": dict(verdicts),
        "states": dict(states),
    }


def table(rows: list[dict], agents: int, slots: int) -> str:
    head = (
        "| mode | kernels | scored | submit (s) | wall (s) | median result (s) | evaluations/hour |"
    )
    lines = [head, "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['mode']} | {r['count']} | {r['scored']} | {r['submit_s']:.2f} | "
            f"{r['wall_s']:.1f} | {r['median_latency_s']:.1f} | {r['per_hour']:.0f} |"
        )
    lines.append("")
    for r in rows:
        lines.append(f"- {r['mode']}: verdicts {r['verdicts']}, run states {r['states']}")
    return "\n".join(lines)


def write_doc(text: str, args: argparse.Namespace, warm_s: float) -> None:
    cpu = platform.processor() or platform.machine()
    DOC.write_text(
        "# Client throughput: scored evaluations per hour\n\n"
        "Measured with `bench/client_throughput.py "
        f"--agents {args.agents} --slots {args.slots} --count {args.count} "
        f"--modes {','.join(args.modes)}` on {time.strftime('%Y-%m-%d')}: one machine "
        f"({os.cpu_count()} CPU cores, {cpu}), a local farm (Django development server on "
        f"SQLite, Redis broker, {args.agents} npu-sim-v1 agents x {args.slots} slot(s), "
        "process sandbox). Kernels: the generated vector_add / softmax batch of "
        "examples/rl_kernels (about a third deliberately wrong), submitted in one "
        "`FarmClient.submit_batch` call and read with `FarmClient.as_completed`.\n\n"
        f"Warm-up (one test-mode run per agent, not counted): {warm_s:.1f} s.\n\n"
        + text
        + "\n\nA run is *scored* when it ends `done` with a verdict. evaluations/hour = scored / "
        "(first submit -> last result). The numbers scale with agents x slots until the CPU "
        "is full: each npu-sim evaluation is a CPU process (the Triton interpreter plus the cost "
        "model). Server-side overheads per run are measured in bench/dispatch.py.\n"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", type=int, default=4)
    p.add_argument("--slots", type=int, default=1, help="FARM_NPU_SIM_SLOTS per agent")
    p.add_argument("--count", type=int, default=64)
    p.add_argument("--modes", type=lambda s: s.split(","), default=["test", "benchmark"])
    p.add_argument("--timeout", type=float, default=1800.0)
    p.add_argument("--doc", action="store_true", help=f"write {DOC.relative_to(REPO)}")
    args = p.parse_args()
    absent = missing()
    if absent:
        print("cannot run: this checkout lacks " + "; ".join(absent), file=sys.stderr)
        return 2
    if shutil.which("redis-cli") and BROKER.startswith("redis://127.0.0.1:6379/"):
        db = BROKER.rsplit("/", 1)[1]
        subprocess.run(["redis-cli", "-n", db, "flushdb"], capture_output=True, check=False)
    from farm.client import FarmClient

    work = Path(tempfile.mkdtemp(prefix="farm-client-bench-"))
    farm, _ = start_farm(work, args.agents, args.slots)
    try:
        client = FarmClient(farm.url, farm.tokens["user"])
        warm_s = warm_up(client, args.agents, args.timeout)
        rows = [measure(client, args.count, mode, args.timeout) for mode in args.modes]
    finally:
        farm.stop()
    text = table(rows, args.agents, args.slots)
    print(text)
    if args.doc:
        write_doc(text, args, warm_s)
    print(f"logs in {work}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
