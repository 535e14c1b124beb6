"""The same kernel's time in fresh processes: how far apart the runs land, and what moves them.

A warm node gives every evaluation a fresh worker process, so the spread that matters is between
processes, not between runs in one process (bench/harness_fidelity.py --part spread). The
kernels are the warm-pool bench's small ones (core-v1 vector_add, rmsnorm, layernorm, silu: an
honest Triton kernel of tests/solutions/correct on the problem's first full-size workload,
inputs from the problem's own maker), timed by the harness's timer (farm.harness.timing.GpuTimer,
the default GPU policy, the cool-down gate before each measurement, as the supervisor does).

Two parts:
- default: each round starts one fresh process per mode, `allocator` (inputs where the caching
  allocator puts them: one place for a whole run, the harness before farm.harness.timing.Placement)
  and `placed` (a place drawn for every call, the harness now); each process times every kernel
  `--repeats` times. Prints, per mode and kernel, the spread (max - min) / median across the
  processes' first measurements of the calls' median and of their trimmed mean (the scored
  statistic, farm.scoring.TimingStats), and the spread between repeats inside one process.
- `--probe N`: in one process, each kernel at N random placements of its inputs (4 KiB-aligned
  views of a 1 GiB arena, each held for a short run), then `--rounds` runs with one placement
  for the whole run and as many with a new placement per call: what a placement does to a time.

Usage (GPU node):
  PYTHONPATH=. python3 bench/process_spread.py --rounds 6 --out spread.json
  PYTHONPATH=. python3 bench/process_spread.py --probe 24 --rounds 8 --problems vector_add,rmsnorm
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]
from warm_pool import spread_pct  # noqa: E402  the warm-pool bench's spread, the same formula

SMALL = ["vector_add", "rmsnorm", "layernorm", "silu"]  # 20-80 us on an H200 (warm_pool.py)
MODES = {"allocator": False, "placed": True}  # mode -> TimingPolicy.place_inputs
STATS = ("median_us", "trimmed_us")


def jobs(problems: list[str], device: Any) -> dict[str, tuple[str, Any, Any]]:
    """problem -> (workload id, input maker, the honest kernel's call)."""
    from warm_pool import KERNELS, workload_of

    from farm.harness import forms, runtime
    from farm.suite.loader import load_suite

    suite = load_suite("core-v1")
    out = {}
    for name in problems:
        problem = suite.problem(name)
        w = problem.workload(workload_of(name, device.type))
        module = runtime.load_problem_module(problem.directory)
        request = {"axes": w.axes, "dtype": w.dtype, "seed_base": 7}
        make = runtime.input_maker(module, request, device)
        sub = forms.load(ROOT / "tests" / "solutions" / "correct" / KERNELS[name])
        out[name] = (w.id, make, lambda xs, sub=sub: runtime.as_output_list(sub.call(xs)))
    return out


def timer_for(device: Any) -> Any:
    """The harness's timer, its one-time costs paid (as a worker pays them before its job)."""
    import torch

    from farm.harness.timing import CpuTimer, GpuTimer, prime

    if device.type == "cpu":
        return CpuTimer()
    timer = GpuTimer(device, torch.cuda.get_device_properties(device).L2_cache_size)
    prime(timer, device)
    return timer


def summary(times_ms: list[float]) -> dict[str, Any]:
    from farm.scoring import TimingStats

    s = TimingStats.from_samples(times_ms)
    return {
        "median_us": 1000 * s.median_ms,
        "trimmed_us": 1000 * s.trimmed_mean_ms,
        "calls": s.count,
    }


def child(mode: str, repeats: int, problems: list[str], where: str) -> dict[str, Any]:
    """One fresh process: each problem timed `repeats` times, interleaved."""
    import torch

    from farm.harness import thermal
    from farm.harness.timing import TimingPolicy, run_windows

    device = torch.device(where)
    timer = timer_for(device)
    policy = replace(TimingPolicy.for_device(where), place_inputs=MODES[mode])
    out: dict[str, Any] = {"mode": mode, "runs": {}}
    for _ in range(repeats):
        for name, (wid, make, call) in jobs(problems, device).items():
            cool = thermal.cool_down(device.index or 0) if device.type != "cpu" else {}
            run = run_windows(timer, call, make, policy)
            row = {"workload": wid, **summary(run.times_ms), "cool_down": cool}
            out["runs"].setdefault(name, []).append(row)
    return out


def probe(problems: list[str], where: str, placements: int, runs: int) -> dict[str, Any]:
    """In one process: times at `placements` random placements, then `runs` runs with one
    placement each and `runs` with a new placement per call (see the module docstring)."""
    import torch

    from farm.harness import thermal
    from farm.harness.timing import TimingPolicy, run_windows

    device = torch.device(where)
    timer = timer_for(device)
    arena = torch.empty(1 << 30, dtype=torch.uint8, device=device)
    rng = random.Random(11)
    policy = replace(TimingPolicy.for_device(where), place_inputs=False)
    doc: dict[str, Any] = {}
    for name, (wid, make, call) in jobs(problems, device).items():
        sizes = [t.nbytes for t in make(0)]

        def draw(sizes: list[int] = sizes) -> list[int]:
            while True:
                offs = [rng.randrange((arena.numel() - n) // 4096) * 4096 for n in sizes]
                spans = sorted(zip(offs, sizes, strict=True))
                if all(a + n <= b for (a, n), (b, _) in itertools.pairwise(spans)):
                    return offs

        def at(fixed: list[int] | None, make: Any = make, draw: Any = draw) -> Any:
            def inputs(i: int) -> list[Any]:
                offs = fixed or draw()
                return [
                    arena[o : o + t.nbytes].view(t.dtype).view(t.shape).copy_(t)
                    for o, t in zip(offs, make(i), strict=True)
                ]

            return inputs

        short = replace(policy, budget_ms=300, min_calls=50)
        per_place = [
            summary(run_windows(timer, call, at(draw()), short).times_ms) for _ in range(placements)
        ]
        result: dict[str, Any] = {"workload": wid, "placements": per_place}
        result.update(one_placement=[], per_call=[])
        for r in range(2 * runs):
            kind = "one_placement" if r % 2 == 0 else "per_call"
            thermal.cool_down(device.index or 0)
            run = run_windows(timer, call, at(draw() if kind == "one_placement" else None), policy)
            result[kind].append(summary(run.times_ms))
        doc[name] = result
    return doc


def run_children(args: argparse.Namespace, problems: list[str]) -> dict[str, list[Any]]:
    results: dict[str, list[Any]] = {m: [] for m in MODES}
    for r in range(args.rounds):
        for mode in list(MODES) if r % 2 == 0 else list(MODES)[::-1]:  # alternate the order
            cmd = [sys.executable, __file__, "--child", mode, "--repeats", str(args.repeats)]
            cmd += ["--problems", ",".join(problems), "--device", args.device]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                sys.exit(proc.stderr[-3000:])
            results[mode].append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"round {r + 1}/{args.rounds}", flush=True)
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--problems", default=",".join(SMALL))
    ap.add_argument("--device", default="cuda", help="cuda, or cpu for a smoke test")
    ap.add_argument("--probe", type=int, default=0, help="placements to probe in one process")
    ap.add_argument("--out", type=Path, default=Path("process_spread.json"))
    ap.add_argument("--child", choices=list(MODES), help=argparse.SUPPRESS)
    args = ap.parse_args()
    problems = args.problems.split(",")
    if args.child:
        print(json.dumps(child(args.child, args.repeats, problems, args.device)))
        return 0
    doc: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "rounds": args.rounds}
    if args.probe:
        doc["probe"] = probe(problems, args.device, args.probe, args.rounds)
        args.out.write_text(json.dumps(doc, indent=1))
        print("\n| problem | placements: min - max us | runs | statistic | spread % |")
        print("|---|---|---|---|---|")
        for name, res in doc["probe"].items():
            meds = [p["median_us"] for p in res["placements"]]
            for kind, stat in itertools.product(("one_placement", "per_call"), STATS):
                v = [x[stat] for x in res[kind]]
                print(
                    f"| {name} | {min(meds):.2f} - {max(meds):.2f} | {kind} | {stat} "
                    f"| {spread_pct(v):.2f} |"
                )
        return 0
    doc["children"] = run_children(args, problems)
    table = {}
    print(
        "\n| mode | problem | median us | spread of medians % | spread of trimmed means % "
        "| inside a process % |"
    )
    print("|---|---|---|---|---|---|")
    for mode, name in itertools.product(MODES, problems):
        runs = [c["runs"][name] for c in doc["children"][mode]]
        row = {f"{stat}_spread": spread_pct([rs[0][stat] for rs in runs]) for stat in STATS}
        row["inside"] = statistics.median(spread_pct([x["trimmed_us"] for x in rs]) for rs in runs)
        row["median_us"] = statistics.median(rs[0]["median_us"] for rs in runs)
        table[f"{mode}/{name}"] = row
        print(
            f"| {mode} | {name} | {row['median_us']:.2f} | {row['median_us_spread']:.2f} "
            f"| {row['trimmed_us_spread']:.2f} | {row['inside']:.2f} |"
        )
    doc["table"] = table
    args.out.write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
