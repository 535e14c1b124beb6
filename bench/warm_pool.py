"""Evaluations on a warm node, without the server: what one agent slot does per job.

One long-lived process holds a warm worker pool (farm.harness.pool: a candidate worker started
ahead, the baseline workers kept) and evaluates honest core-v1 kernels one after the other, one
workload each, in benchmark mode, as a slot serves a queue. A first round per problem fills the
node's caches (baselines, the trusted side's yardsticks, compiled references) and is not
counted; then `--rounds` rounds over the problems are timed. Prints per problem the walls
(p50, p95), the phases, the spread of the measured times across rounds (the same kernel in
separate evaluations), and the scores per hour the slot sustained.

    PYTHONPATH=. python3 bench/warm_pool.py --device cuda --rounds 5 --out warm.json
    PYTHONPATH=. FARM_ALLOW_UNSANDBOXED=1 python3 bench/warm_pool.py --device cpu --sandbox \\
        process --rounds 1 --problems vector_add        # a smoke run without a GPU

The server's part of submit -> score (queueing, the upload, the result post: about 0.3 s per
run, docs/dispatch.md) is not in these walls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]
from agent_gpu_e2e import BATCH  # noqa: E402  the end-to-end run's honest kernels, the same six

KERNELS = dict(BATCH)  # problem -> an honest kernel of tests/solutions/correct


def workload_of(problem: str, device: str) -> str:
    """The problem's first full-size workload (its first small one off GPUs)."""
    from farm.suite.loader import load_suite

    p = load_suite("core-v1").problem(problem)
    gpu = device not in ("cpu", "npu-sim")
    return next(w.id for w in p.workloads if w.small != gpu)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--sandbox", default="auto")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--problems", help="comma-separated (default: all of KERNELS)")
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from farm.harness.pool import WorkerPool
    from farm.harness.supervisor import evaluate

    names = args.problems.split(",") if args.problems else list(KERNELS)
    plan = {name: workload_of(name, args.device) for name in names}
    pool = WorkerPool(device=args.device, sandbox=args.sandbox)
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    try:
        for rnd in range(args.rounds + 1):
            if rnd == 1:  # the first round fills the node's caches and is not counted
                started = time.perf_counter()
            for name, workload in plan.items():
                t0 = time.perf_counter()
                doc = evaluate(
                    ROOT / "tests" / "solutions" / "correct" / KERNELS[name],
                    suite="core-v1",
                    problem=name,
                    device=args.device,
                    mode="benchmark",
                    sandbox=args.sandbox,
                    workloads=[workload],
                    baselines=not args.no_baselines,
                    pool=pool,
                )
                wall = time.perf_counter() - t0
                w = next((x for x in doc["workloads"] if x["id"] == workload), {})
                row = {
                    "round": rnd,
                    "problem": name,
                    "workload": workload,
                    "verdict": doc["verdict"],
                    "wall_s": round(wall, 3),
                    "time_ms": w.get("time_ms"),
                    "phases_s": doc["timing"].get("phases_s", {}),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
        total = time.perf_counter() - started if args.rounds else 0.0
    finally:
        pool.close()
    summary = summarise(rows, total)
    if args.out:
        args.out.write_text(json.dumps({"device": args.device, "rows": rows, **summary}, indent=1))
    return 0 if all(r["verdict"] == "PASSED" for r in rows) else 1


def summarise(rows: list[dict[str, Any]], total_s: float) -> dict[str, Any]:
    timed = [r for r in rows if r["round"] > 0]
    walls = sorted(r["wall_s"] for r in timed)
    per_problem = {}
    print("\n| problem | workload | p50 wall s | p95 wall s | time spread % | phases (median s) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in dict.fromkeys(r["problem"] for r in timed):
        mine = [r for r in timed if r["problem"] == name]
        w = sorted(r["wall_s"] for r in mine)
        times = [r["time_ms"] for r in mine if r["time_ms"]]
        spread = 100 * (max(times) - min(times)) / statistics.median(times) if times else None
        keys = dict.fromkeys(k for r in mine for k in r["phases_s"])
        phases = {k: statistics.median(r["phases_s"].get(k, 0.0) for r in mine) for k in keys}
        per_problem[name] = {"p50_s": pct(w, 50), "p95_s": pct(w, 95), "spread_pct": spread}
        shown = ", ".join(f"{k} {v:.2f}" for k, v in phases.items())
        spread_text = f"{spread:.2f}" if spread is not None else "-"
        print(
            f"| {name} | {mine[0]['workload']} | {pct(w, 50):.2f} | {pct(w, 95):.2f} "
            f"| {spread_text} | {shown} |"
        )
    per_hour = 3600 * len(timed) / total_s if total_s else 0.0
    print(
        f"\n{len(timed)} evaluations in {total_s:.1f} s: p50 {pct(walls, 50):.2f} s, "
        f"p95 {pct(walls, 95):.2f} s, {per_hour:.0f} scores / hour on one slot"
    )
    return {
        "p50_s": pct(walls, 50),
        "p95_s": pct(walls, 95),
        "scores_per_hour": per_hour,
        "per_problem": per_problem,
    }


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    k = min(len(values) - 1, max(0, round(q / 100 * (len(values) - 1))))
    return sorted(values)[k]


if __name__ == "__main__":
    sys.exit(main())
