"""The timing phase against its budget: honest kernels of every size, benchmark mode, no
baselines; for each workload the supervisor's own wall time of its timing windows (re-checks not
counted) must stay within 1.1 x the timing policy's budget, whatever the kernel's time or the
profiler trace's size, and the warm-up request within 1.1 x its `warmup_ms` or the three calls
it must make at least, whichever is longer (a call's wall as the windows measured it).

    PYTHONPATH=. python3 bench/timing_budget.py --device cuda --out DIR
    PYTHONPATH=. python3 bench/timing_budget.py --device cpu --match vector_add --out DIR

Prints one row per workload (calls, windows, re-checked calls, the kernel's time, the timing wall
and its limit) and writes DIR/timing_budget_<device>.json; exits 1 when a timing overran its
limit or an honest kernel did not PASS.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = re.compile(r"^# problem: (\S+)", re.M)
DEFAULT = "matmul__triton,softmax__triton,layernorm__triton,vector_add__triton,conv2d__pytorch"


def rows_for(path: Path, device: str) -> list[dict]:
    from farm.harness.supervisor import evaluate
    from farm.harness.targets import resolve_target

    problem = HEADER.findall(path.read_text())[0]
    policy = resolve_target(device, None, 0).policy({})
    limit_ms = 1.1 * policy.budget_ms
    doc = evaluate(
        path, problem=problem, device=device, mode="benchmark", baselines=False
    ).to_json()
    rows = []
    for entry in doc["workloads"]:
        timing = entry.get("timing") or {}
        windows = timing.get("windows", [])
        calls = sum(w["calls"] for w in windows)
        windows_ms = sum(w["wall_ms"] for w in windows)
        warm_ms = timing.get("warmup_wall_ms") or 0.0
        warm_limit = 1.1 * max(policy.warmup_ms, 3 * windows_ms / max(calls, 1)) + 100
        wall = timing.get("wall_ms_outside")
        rows.append(
            {
                "file": path.name,
                "workload": entry["id"],
                "status": entry["status"],
                "calls": calls,
                "windows": len(windows),
                "rechecked": len(timing.get("rechecked", [])),
                "time_ms": entry["time_ms"],
                "warmup_wall_ms": round(warm_ms, 1),
                "warmup_limit_ms": round(warm_limit, 1),
                "windows_wall_ms": round((wall or 0.0) - warm_ms, 1),
                "limit_ms": round(limit_ms, 1),
                "ok": entry["status"] in ("PASSED", "SKIPPED")
                and (wall or 0.0) - warm_ms <= limit_ms
                and warm_ms <= warm_limit,
            }
        )
    return rows


def gpu_timer_check() -> bool:
    """The GPU timer alone: one span per call from the raw Kineto events, each within twice its
    CUDA-event time, and each call's outputs as they were when its timer stopped."""
    import torch

    from farm.harness.timing import GpuTimer, TimingPolicy

    device = torch.device("cuda")
    timer = GpuTimer(device, llc_bytes=50 << 20)
    x = torch.randn(1 << 22, device=device)
    policy = TimingPolicy(warmup_ms=0)
    timer.warmup(lambda xs: [xs[0] * 2], lambda i: [x + i], policy)
    window = timer.window(lambda xs: [xs[0] * 2], lambda i: [x + i], 5, 7, policy)
    pairs = list(zip(window.times_ms, window.event_ms))
    ok = timer.profiler_ok and len(pairs) == 7
    ok = ok and all(0 < span <= 2 * event + 0.05 for span, event in pairs)
    ok = ok and torch.equal(window.outputs[3][0], (x + 8) * 2)
    print(f"GPU timer: spans/events ms {[(round(a, 4), round(b, 4)) for a, b in pairs]} ok={ok}")
    return bool(ok)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--match", default=DEFAULT, help="comma-separated solution file prefixes")
    ap.add_argument("--out", type=Path, default=Path("."))
    args = ap.parse_args()
    prefixes = tuple(m for m in args.match.split(",") if m)
    files = sorted((ROOT / "tests" / "solutions" / "correct").glob("*.py"))
    rows: list[dict] = []
    timer_ok = gpu_timer_check() if args.device == "cuda" else True
    print(
        "| file | workload | status | calls | windows | re-checked | time ms "
        "| warm-up ms (limit) | windows ms (limit) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for path in files:
        if not path.name.startswith(prefixes):
            continue
        for r in rows_for(path, args.device):
            rows.append(r)
            print(
                f"| {r['file']} | {r['workload']} | {r['status']} | {r['calls']} | "
                f"{r['windows']} | {r['rechecked']} | {r['time_ms']:.4g} | "
                f"{r['warmup_wall_ms']} ({r['warmup_limit_ms']}) | "
                f"{r['windows_wall_ms']} ({r['limit_ms']}){'' if r['ok'] else ' **over**'} |",
                flush=True,
            )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"timing_budget_{args.device}.json").write_text(json.dumps(rows, indent=1))
    bad = [f"{r['file']}:{r['workload']}" for r in rows if not r["ok"]]
    print(
        f"{len(rows) - len(bad)} of {len(rows)} within the limit" + (f"; not: {bad}" if bad else "")
    )
    return 1 if bad or not timer_ok else 0


if __name__ == "__main__":
    sys.exit(main())
