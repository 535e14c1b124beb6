#!/usr/bin/env python3
"""How an evaluation's cost grows: wall time vs problem size (bytes) and vs batch size, per
device kind, with fitted lines, so that an operator can size a fleet.

    PYTHONPATH=. python3 bench/scaling.py --device cpu [--problems vector_add,softmax]
        [--max-mb 64] [--batches 1,4,16] [--repeats 3] [--sandbox bwrap] [--json OUT.json]

Every evaluation is what a warm agent slot does (farm.harness.pool.WorkerPool, one per device,
started before the clock; benchmark mode, baselines as the agent runs them) on one honest kernel
per problem: the PyTorch one-liners of KERNELS, or a file of your own (`--kernel NAME=PATH`).

- Size: each workload of each problem whose bytes moved (farm.sol: inputs read and outputs
  written once) are at most `--max-mb`, evaluated alone, `--repeats` times (median). Fitted per
  problem: wall = fixed + slope x bytes (least squares), with R^2.
- Batch: `B` evaluations of the problem's smallest workload back to back on the same pool, for
  each B of `--batches`. Fitted: wall = fixed + per_evaluation x B.

The first evaluation on a fresh pool (imports, yardsticks measured once per node) is run
before any clock and left out.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


KERNELS = {
    "vector_add": "def kernel(a, b):\n    return a + b\n",
    "softmax": "import torch\n\n\ndef kernel(x):\n    return torch.softmax(x, dim=-1)\n",
    "rmsnorm": "import torch\n\n\ndef kernel(x, w):\n"
    "    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w\n",
}


def fit(xs: list[float], ys: list[float]) -> dict[str, float]:
    """Least squares y = fixed + slope x; with R^2 (nan with fewer than 2 distinct x)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if n < 2 or sxx == 0:
        return {"fixed": my, "slope": float("nan"), "r2": float("nan")}
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    fixed = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - fixed - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    return {"fixed": fixed, "slope": slope, "r2": 1 - ss_res / ss_tot if ss_tot else 1.0}


def workload_bytes(problem: Any, workload: Any) -> float:
    """Bytes moved by the workload (inputs read and outputs written once: farm.sol's count; the
    count does not depend on the hardware spec it is computed with)."""
    from farm.hardware.specs import get_spec
    from farm.sol import sol_bound

    return float(sol_bound(problem, workload, get_spec("npu-sim-v1")).bytes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu, npu-sim, cuda, ...")
    parser.add_argument("--problems", default="vector_add,softmax")
    parser.add_argument("--max-mb", type=float, default=64.0)
    parser.add_argument("--batches", default="1,4,16")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--kernel", action="append", default=[], help="NAME=PATH: this file")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    files = dict(k.split("=", 1) for k in args.kernel)

    from farm.harness.pool import WorkerPool
    from farm.harness.supervisor import evaluate
    from farm.suite.loader import load_suite

    suite = load_suite("core-v1")
    pool = WorkerPool(device=args.device, sandbox=args.sandbox)
    out: dict[str, Any] = {
        "command": " ".join(["python3", *sys.argv]),
        "machine": {"python": platform.python_version(), "node": platform.node()},
        "device": args.device,
        "size": {},
        "batch": {},
    }

    def timed(path: Path, problem: str, workloads: list[str]) -> tuple[float, str]:
        t0 = time.monotonic()
        doc = evaluate(
            path,
            problem=problem,
            device=args.device,
            mode="benchmark",
            workloads=workloads,
            sandbox=args.sandbox,
            pool=pool,
        ).to_json()
        return time.monotonic() - t0, doc["verdict"]

    try:
        for name in args.problems.split(","):
            problem = suite.problem(name)
            if name in files:
                path = Path(files[name])
            else:
                path = Path(tempfile.mkdtemp(prefix="farm-scaling-")) / f"{name}.py"
                path.write_text(KERNELS[name])
            sized = sorted(
                (workload_bytes(problem, w), w.id)
                for w in problem.workloads
                if workload_bytes(problem, w) <= args.max_mb * 2**20
            )
            timed(path, name, [sized[0][1]])  # warm: imports, yardsticks, baselines' caches
            rows = []
            for nbytes, wid in sized:
                walls, verdicts = [], set()
                for _ in range(args.repeats):
                    wall, verdict = timed(path, name, [wid])
                    walls.append(wall)
                    verdicts.add(verdict)
                rows.append(
                    {"workload": wid, "bytes": nbytes, "wall_s": statistics.median(walls)}
                    | {"walls_s": walls, "verdicts": sorted(verdicts)}
                )
                print(f"{name} {wid}: {nbytes / 2**20:.2f} MiB {rows[-1]['wall_s']:.2f} s")
            line = fit([r["bytes"] for r in rows], [r["wall_s"] for r in rows])
            out["size"][name] = {"rows": rows, "fit": line}
            smallest = sized[0][1]
            batch_rows = []
            for b in (int(x) for x in args.batches.split(",")):
                t0 = time.monotonic()
                verdicts = {timed(path, name, [smallest])[1] for _ in range(b)}
                batch_rows.append(
                    {"batch": b, "wall_s": time.monotonic() - t0, "verdicts": sorted(verdicts)}
                )
                print(f"{name} batch {b}: {batch_rows[-1]['wall_s']:.2f} s")
            out["batch"][name] = {
                "workload": smallest,
                "rows": batch_rows,
                "fit": fit([r["batch"] for r in batch_rows], [r["wall_s"] for r in batch_rows]),
            }
    finally:
        pool.close()
    print(table(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


def table(out: dict[str, Any]) -> str:
    lines = [f"device {out['device']}", "| problem | fit by size | fit by batch |", "|---|---|---|"]
    for name, size in out["size"].items():
        s, b = size["fit"], out["batch"][name]["fit"]
        lines.append(
            f"| {name} | {s['fixed']:.2f} s + {s['slope'] * 2**30:.3g} s/GiB (R^2 {s['r2']:.2f}, "
            f"{len(size['rows'])} sizes) | {b['fixed']:.2f} s + {b['slope']:.2f} s per "
            f"evaluation (R^2 {b['r2']:.2f}) |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
