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

With `--gpus N` it runs that slot's loop on GPU 0 alone, then on N GPUs at once (one process
per GPU, as an agent runs one slot per GPU), and prints the scores per hour of both and their
ratio, the walls (p50, p95) of all the GPUs' evaluations together, how busy the host's CPUs
were, and how far the same kernel's times on the different GPUs are apart (what an audit on
another GPU of the node compares). `--alone-rounds` sets the single GPU's rounds apart from the
N GPUs' (`--rounds`), e.g. a batch of 204 evaluations over two GPUs after a shorter one alone:

    PYTHONPATH=. python3 bench/warm_pool.py --device cuda --gpus 2 --rounds 17 \
        --alone-rounds 6 --out multi.json

The server's part of submit -> score (queueing, the upload, the result post: about 0.3 s per
run, docs/dispatch.md) is not in these walls.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
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
    ap.add_argument("--device-index", type=int, default=0, help="the GPU (vendor index)")
    ap.add_argument("--gpus", type=int, default=0, help="compare 1 GPU with this many")
    ap.add_argument("--alone-rounds", type=int, help="--gpus: GPU 0's rounds alone")
    ap.add_argument("--meet", type=Path, help=argparse.SUPPRESS)  # --gpus: start counting
    ap.add_argument("--parties", type=int, default=1, help=argparse.SUPPRESS)  # together
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.gpus:
        return several_gpus(args)

    from farm.harness.pool import WorkerPool
    from farm.harness.supervisor import evaluate

    names = args.problems.split(",") if args.problems else list(KERNELS)
    plan = {name: workload_of(name, args.device) for name in names}
    pool = WorkerPool(device=args.device, sandbox=args.sandbox, device_index=args.device_index)
    rows: list[dict[str, Any]] = []
    started, started_at = time.perf_counter(), time.time()
    try:
        for rnd in range(args.rounds + 1):
            if rnd == 1:  # the first round fills the node's caches and is not counted
                if args.meet:
                    meet(args.meet, args.device_index, args.parties)
                started, started_at = time.perf_counter(), time.time()
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
                    device_index=args.device_index,
                    pool=pool,
                ).to_json()
                wall = time.perf_counter() - t0
                w = next((x for x in doc["workloads"] if x["id"] == workload), {})
                why = [*doc["reasons"], *w.get("errors", [])]
                why += [f for f in doc["guard"]["findings"] if f.get("severity") == "reject"]
                row = {
                    "round": rnd,
                    "problem": name,
                    "workload": workload,
                    "verdict": doc["verdict"],
                    "wall_s": round(wall, 3),
                    "time_ms": w.get("time_ms"),
                    "phases_s": doc["timing"].get("phases_s", {}),
                    **({"why": why} if doc["verdict"] != "PASSED" else {}),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
        total = time.perf_counter() - started if args.rounds else 0.0
    finally:
        pool.close()
    summary = summarise(rows, total)
    counted = {"counted_from": started_at, "counted_to": started_at + total}
    if args.out:
        doc = {"device": args.device, "device_index": args.device_index, "rows": rows}
        args.out.write_text(json.dumps({**doc, **counted, **summary}, indent=1))
    return 0 if all(r["verdict"] == "PASSED" for r in rows) else 1


def meet(where: Path, index: int, parties: int, timeout: float = 900) -> None:
    """Wait until every slot of a --gpus run has filled its caches, so that all count together."""
    (where / f"ready-{index}").touch()
    end = time.monotonic() + timeout
    while len(list(where.glob("ready-*"))) < parties and time.monotonic() < end:
        time.sleep(0.05)


def several_gpus(args: argparse.Namespace) -> int:
    """GPU 0 alone, then `args.gpus` GPUs at once, one slot process each."""
    # the slots' own documents, beside --out (kept if the comparison is cut short)
    tmp = args.out.parent / "slots" if args.out else Path(tempfile.mkdtemp(prefix="warm-pool-"))
    alone_rounds = args.rounds if args.alone_rounds is None else args.alone_rounds
    alone = run_slots(args, [0], tmp / "alone", alone_rounds)
    together = run_slots(args, list(range(args.gpus)), tmp / "together", args.rounds)
    ratio = together["scores_per_hour"] / alone["scores_per_hour"]
    apart = gpu_disagreement(together["slots"])
    print(
        f"\none GPU: {alone['scores_per_hour']:.0f} scores / hour; {args.gpus} GPUs: "
        f"{together['scores_per_hour']:.0f} scores / hour: {ratio:.2f}x"
    )
    for name, phase in (("one GPU", alone), (f"{args.gpus} GPUs", together)):
        print(
            f"{name}: {phase['evaluations']} evaluations, p50 {phase['p50_s']:.2f} s, "
            f"p95 {phase['p95_s']:.2f} s, {phase['scores_per_hour'] / len(phase['gpus']):.0f} "
            f"scores / hour / GPU, host CPUs {phase['cpu_busy_pct']:.0f} % busy"
        )
    for name, pct_apart in apart.items():
        print(f"{name}: median times on the {args.gpus} GPUs {pct_apart:.2f} % apart")
    if args.out:
        doc = {"alone": alone, "together": together, "ratio": ratio, "gpus_apart_pct": apart}
        args.out.write_text(json.dumps(doc, indent=1))
    ok = all(s["passed"] for s in alone["slots"] + together["slots"])
    return 0 if ok else 1


def run_slots(
    args: argparse.Namespace, indices: list[int], where: Path, rounds: int
) -> dict[str, Any]:
    """One bench process per GPU of `indices`, started together; their counted evaluations
    over the time from the first one's counting start to the last one's end, and the share of
    the host's CPU time that was busy meanwhile (the whole phase, cache-filling round too)."""
    where.mkdir(parents=True)
    env = {**os.environ, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}  # torch numbers GPUs as NVML does
    base = [sys.executable, __file__, "--device", args.device, "--sandbox", args.sandbox]
    base += ["--rounds", str(rounds)]
    base += ["--problems", args.problems] if args.problems else []
    base += ["--no-baselines"] if args.no_baselines else []
    base += ["--meet", str(where), "--parties", str(len(indices))]
    procs = [
        subprocess.Popen(
            [*base, "--device-index", str(i), "--out", str(where / f"gpu{i}.json")], env=env
        )
        for i in indices
    ]
    cpu_before = cpu_times()
    codes = [p.wait() for p in procs]
    busy, total = (b - a for a, b in zip(cpu_before, cpu_times(), strict=True))
    slots = []
    for i, code in zip(indices, codes, strict=True):
        doc = json.loads((where / f"gpu{i}.json").read_text()) if code in (0, 1) else {}
        slots.append({**doc, "passed": code == 0})
    done = [s for s in slots if s.get("rows")]
    count = sum(1 for s in done for r in s["rows"] if r["round"] > 0)
    span = max(s["counted_to"] for s in done) - min(s["counted_from"] for s in done)
    per_hour = 3600 * count / span if span > 0 else 0.0
    walls = sorted(r["wall_s"] for s in done for r in s["rows"] if r["round"] > 0)
    return {
        "gpus": indices,
        "evaluations": count,
        "span_s": span,
        "scores_per_hour": per_hour,
        "p50_s": pct(walls, 50),
        "p95_s": pct(walls, 95),
        "cpu_busy_pct": 100 * busy / total if total else 0.0,
        "slots": slots,
    }


def cpu_times() -> tuple[int, int]:
    """(busy, total) CPU time of the host so far, in clock ticks (/proc/stat; zeros elsewhere)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def gpu_disagreement(slots: list[dict[str, Any]]) -> dict[str, float]:
    """Per problem, how far apart the GPUs' median measured times are (max - min over min, %)."""
    medians: dict[str, list[float]] = {}
    for slot in slots:
        for name, stats in slot.get("per_problem", {}).items():
            if stats.get("median_ms"):
                medians.setdefault(name, []).append(stats["median_ms"])
    return {name: 100 * (max(m) - min(m)) / min(m) for name, m in medians.items() if len(m) > 1}


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
        spread = spread_pct(times) if times else None
        keys = dict.fromkeys(k for r in mine for k in r["phases_s"])
        phases = {k: statistics.median(r["phases_s"].get(k, 0.0) for r in mine) for k in keys}
        per_problem[name] = {
            "p50_s": pct(w, 50),
            "p95_s": pct(w, 95),
            "spread_pct": spread,
            "median_ms": statistics.median(times) if times else None,
        }
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


def spread_pct(values: list[float]) -> float:
    """(max - min) / median of the same kernel's times over separate evaluations, %."""
    return 100 * (max(values) - min(values)) / statistics.median(values)


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    k = min(len(values) - 1, max(0, round(q / 100 * (len(values) - 1))))
    return sorted(values)[k]


if __name__ == "__main__":
    sys.exit(main())
