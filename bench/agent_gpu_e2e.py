"""End to end on a GPU machine: a local server (SQLite, the embedded SQLAlchemy broker) and one
node agent with a CUDA (or ROCm) device evaluate a batch of honest kernels; prints per-run wall
time split into queue wait, sandbox start, compile, correctness, timing and upload.

    python3 bench/agent_gpu_e2e.py [--sandbox auto|bwrap|docker|process] [--mode benchmark]
                                   [--repeat 2] [--json out.json]

Needs on that machine: torch + triton (the farm's core), requests, prometheus-client, pyyaml,
and the server's wheels (Django and friends, Celery, SQLAlchemy; see docs/agents.md). No Redis,
no PostgreSQL. With `--sandbox process` set FARM_ALLOW_UNSANDBOXED=1 (development only).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BATCH = [
    ("vector_add", "vector_add__triton.py"),
    ("softmax", "softmax__triton.py"),
    ("rmsnorm", "rmsnorm__triton.py"),
    ("matmul", "matmul__triton.py"),
    ("silu", "silu__triton.py"),
    ("layernorm", "layernorm__triton.py"),
]
COLUMNS = ("queue_wait", "sandbox_start", "compile", "correctness", "timing", "upload", "report")


def gpu_class() -> str:
    from farm.hardware.detect import discover

    for d in discover():
        if d.device in ("cuda", "rocm") and d.hardware_class:
            return d.hardware_class
    raise SystemExit("no GPU with a hardware class here (see `python3 -m farm hardware`)")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sandbox", default="auto")
    p.add_argument("--mode", default="benchmark", choices=["test", "benchmark", "leaderboard"])
    p.add_argument("--repeat", type=int, default=1, help="submit the batch this many times")
    p.add_argument("--timeout", type=float, default=1800.0)
    p.add_argument("--json", type=Path, help="write the per-run rows here")
    p.add_argument("--hardware", help="serve this class instead of the detected GPU's")
    p.add_argument("--problems", help="only these problems of the batch, comma-separated")
    args = p.parse_args()
    wanted = set(args.problems.split(",")) if args.problems else None
    batch = [(name, file) for name, file in BATCH if wanted is None or name in wanted]

    from agents.localfarm import LocalFarm

    hw = args.hardware or gpu_class()
    work = Path(tempfile.mkdtemp(prefix="farm-gpu-e2e-"))
    farm = LocalFarm(work, {"DATABASE_URL": f"sqlite:///{work / 'db.sqlite3'}"})
    print(f"hardware {hw}; work dir {work}")
    try:
        farm.setup(nodes=["gpu-node"], hardware=[hw])
        farm.start_server()
        farm.start_server_worker()
        farm.start_agent("gpu-node", FARM_SANDBOX=args.sandbox, FARM_AGENT_DEVICES=hw)
        started = time.monotonic()
        ids = {}
        for r in range(args.repeat):
            for problem, file in batch:
                source = (REPO / "tests/solutions/correct" / file).read_text() + f"\n# {r}\n"
                ids[farm.submit(source, problem=problem, hardware=hw, mode=args.mode)] = problem
        states = farm.wait_runs(list(ids), timeout=args.timeout)
        wall = time.monotonic() - started
        journal = {j["run"]: j for j in farm.journal("gpu-node")}
    finally:
        farm.stop()
    rows = [row(run, problem, states[run], journal.get(run)) for run, problem in ids.items()]
    print_table(rows)
    for r in rows:
        for reason in r["reasons"]:
            print(f"run {r['run']} {r['problem']}: {reason}")
    print(f"batch of {len(rows)} runs in {wall:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0 if all(r["state"] == "done" for r in rows) else 1


def row(run: int, problem: str, state: dict, entry: dict | None) -> dict:
    t = (entry or {}).get("timings") or {}
    phases = t.get("phases") or {}
    out = {
        "run": run,
        "problem": problem,
        "state": state["state"],
        "verdict": state.get("verdict") or state.get("failure_code"),
        "total": t.get("total"),
        "reasons": reasons(state),
    }
    for key in COLUMNS:
        out[key] = phases.get(key, t.get(key))
    return out


def reasons(state: dict) -> list[str]:
    """The node's and the server's reasons for the verdict, as `CODE: detail` lines."""
    result = state.get("result") or {}
    document = result.get("document") or {}
    found = [*document.get("reasons", []), *result.get("server_reasons", [])]
    found += (document.get("guard") or {}).get("findings", [])
    return [f"{r.get('code')}: {r.get('detail')}" for r in found]


def print_table(rows: list[dict]) -> None:
    head = ["run", "problem", "verdict", *COLUMNS, "total"]
    print(" ".join(f"{h:>13}" for h in head))
    for r in rows:
        cells = [str(r["run"]), r["problem"], str(r["verdict"])]
        cells += [
            f"{r[k]:.3f}" if isinstance(r[k], int | float) else "-" for k in (*COLUMNS, "total")
        ]
        print(" ".join(f"{c:>13}" for c in cells))


if __name__ == "__main__":
    sys.exit(main())
