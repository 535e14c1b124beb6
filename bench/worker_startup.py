"""Where a fresh worker's one-time costs go on a GPU node: each step of what a new candidate
worker pays before its first timed call (farm.harness.worker `_warm_timer`), timed in a fresh
interpreter, once with an empty Triton cache and once with the cache the first run left.

    PYTHONPATH=. python3 bench/worker_startup.py [--out startup.json]

Prints one row per step and run (seconds); the steps: importing torch, the device context,
importing triton, the marker kernels' first launch (their compilation, or a cache hit), the
profiler's first start and stop around one kernel, and a second profiled window.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STEPS = r"""
import json, time
t = time.perf_counter
out = {}
s = t(); import torch; out["import torch"] = t() - s
s = t(); x = torch.zeros(1024, device="cuda"); torch.cuda.synchronize()
out["device context"] = t() - s
s = t(); import triton; out["import triton"] = t() - s
s = t()
from farm.harness import markers
buf = torch.zeros(1 << 20, dtype=torch.int32, device="cuda")
markers.flush_l2(buf); markers.call_end(buf); torch.cuda.synchronize()
out["marker kernels, first launch"] = t() - s
from torch.profiler import ProfilerActivity, profile
for label in ("profiler, first window", "profiler, second window"):
    s = t()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        markers.flush_l2(buf); (x + 1).sum(); markers.call_end(buf); torch.cuda.synchronize()
    prof.profiler.kineto_results.events()
    out[label] = t() - s
print("STEPS " + json.dumps(out))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="farm-startup-triton-")
    env = {**os.environ, "TRITON_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    runs = {}
    for label in ("empty Triton cache", "warm Triton cache"):
        done = subprocess.run(
            [sys.executable, "-c", STEPS], env=env, capture_output=True, text=True, check=False
        )
        line = next((x for x in done.stdout.splitlines() if x.startswith("STEPS ")), None)
        if line is None:
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        runs[label] = json.loads(line.removeprefix("STEPS "))
    print("| step | " + " | ".join(runs) + " |")
    print("| --- | " + " | ".join("---" for _ in runs) + " |")
    for step in next(iter(runs.values())):
        print(f"| {step} | " + " | ".join(f"{r[step]:.2f}" for r in runs.values()) + " |")
    if args.out:
        args.out.write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
