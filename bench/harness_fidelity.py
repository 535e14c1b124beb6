"""Run-to-run fidelity of the harness's GPU timer, and the fraction of SOL that kernels reach.

Part 1 (`--part spread`): the issue's five kernels (fp32 add 16M and 64K, bf16 matmul 4096^3,
fp32 softmax 8192^2, bf16 layernorm 16K x 4K) are timed 8 times each in one run by the harness's
own timer (farm.harness.timing.GpuTimer: fresh inputs per call, L2 flush, all-stream CUPTI spans,
adaptive stop), rounds interleaved across kernels. Prints the spread (max - min) / median per
kernel, with and without the cool-down gate; target <= 1 % on every kernel.

Part 2 (`--part sol`): `farm eval` end to end on the GPU (supervisor, sandboxed worker, baselines)
for a sample of core-v1 problems with an honest Triton kernel from tests/solutions/correct/;
prints the fraction of SOL reached by the reference (eager) and by the Triton kernel.

Usage: python bench/harness_fidelity.py --part spread|sol|all [--rounds 8] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from farm.harness.timing import GpuTimer, TimingPolicy

# Column -> whether to wait for the cool-down gate before each measurement, as the supervisor does
# (both columns use the default TimingPolicy).
GATED = {"harness": True, "no-gate": False}
SOL_SAMPLE = ["vector_add", "softmax", "rmsnorm", "layernorm", "matmul", "cross_entropy"]


def _maker(shapes, dtype):  # type: ignore[no-untyped-def]
    def make(i: int):  # type: ignore[no-untyped-def]
        g = torch.Generator(device="cuda").manual_seed(1000 + i)
        return [torch.randn(*s, device="cuda", generator=g).to(dtype) for s in shapes]

    return make


def kernels():  # type: ignore[no-untyped-def]
    f32, bf16 = torch.float32, torch.bfloat16
    ln = torch.nn.functional.layer_norm
    return {
        "add_16M_fp32": (lambda x: x[0] + x[1], _maker([(16 << 20,), (16 << 20,)], f32)),
        "add_64K_fp32": (lambda x: x[0] + x[1], _maker([(64 << 10,), (64 << 10,)], f32)),
        "matmul_4096_bf16": (lambda x: x[0] @ x[1], _maker([(4096, 4096), (4096, 4096)], bf16)),
        "softmax_8192_fp32": (lambda x: torch.softmax(x[0], -1), _maker([(8192, 8192)], f32)),
        "layernorm_16Kx4K_bf16": (
            lambda x: ln(x[0], (4096,), x[1], x[2]),
            _maker([(16384, 4096), (4096,), (4096,)], bf16),
        ),
    }


def sm_clock() -> int:
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return int(pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM))
    except Exception:
        return -1


def part_spread(rounds: int, out: Path) -> dict:
    from farm.harness import thermal

    timer = GpuTimer(torch.device("cuda"), torch.cuda.get_device_properties(0).L2_cache_size)
    ks = kernels()
    policy = TimingPolicy()
    res = {p: {k: [] for k in ks} for p in GATED}
    meta = {p: {k: [] for k in ks} for p in GATED}
    for r in range(rounds):
        for name, (fn, make) in ks.items():
            for pname, gate in GATED.items():
                cool = thermal.cool_down(0) if gate else {}
                c0 = sm_clock()
                run = timer.run(fn, make, policy)
                res[pname][name].append(statistics.median(run.times_ms))
                meta[pname][name].append(
                    {
                        "calls": len(run.times_ms),
                        "method": run.method,
                        "wall_ms": run.wall_ms,
                        "clock_before": c0,
                        "cool_down": cool,
                        "clock_after": sm_clock(),
                    }
                )
        print(f"round {r + 1}/{rounds}", flush=True)
    doc = {
        "device": torch.cuda.get_device_name(0),
        "date": time.strftime("%Y-%m-%d"),
        "rounds": rounds,
        "medians_ms": res,
        "meta": meta,
    }
    (out / "fidelity_spread.json").write_text(json.dumps(doc, indent=1))
    print(f"\n{doc['device']} {doc['date']}: spread = (max-min)/median of {rounds} runs")
    print(f"{'kernel':24s}" + "".join(f"{p:>26s}" for p in GATED))
    for k in ks:
        row = f"{k:24s}"
        for p in GATED:
            v = res[p][k]
            calls = statistics.median(m["calls"] for m in meta[p][k])
            row += f"   {spread(v):6.2%} {statistics.median(v) * 1e3:8.2f}us n={calls:5.0f}"
        print(row)
    return doc


def spread(values: list[float]) -> float:
    return (max(values) - min(values)) / statistics.median(values)


def part_sol(out: Path, problems: list[str]) -> list[dict]:
    from farm.harness.supervisor import evaluate

    solutions = Path(__file__).resolve().parent.parent / "tests" / "solutions" / "correct"
    rows = []
    for name in problems:
        files = sorted(solutions.glob(f"{name}__*triton*.py")) or sorted(
            solutions.glob(f"{name}__*.py")
        )
        if not files:
            print(f"{name}: no solution file", flush=True)
            continue
        t0 = time.time()
        doc = evaluate(
            files[0],
            problem=name,
            device="cuda",
            compile_baseline=False,
            policy={"budget_ms": 2000},
        ).to_json()
        (out / f"sol_{name}.json").write_text(json.dumps(doc, indent=1))
        for w in doc["workloads"]:
            eager, sol_ms = w["baseline_ms"]["eager"], w["sol_ms"]
            rows.append(
                {
                    "problem": name,
                    "kernel": files[0].name,
                    "workload": w["id"],
                    "status": w["status"],
                    "verdict": doc["verdict"],
                    "sol_us": sol_ms and sol_ms * 1e3,
                    "ref_us": eager and eager * 1e3,
                    "kernel_us": w["time_ms"] and w["time_ms"] * 1e3,
                    "ref_sol": eager and sol_ms and sol_ms / eager,
                    "kernel_sol": w["fraction_of_sol"],
                    "sol_score": w["sol_score"],
                }
            )
        print(
            f"{name}: {doc['verdict']} in {time.time() - t0:.0f} s "
            f"{[r['detail'][:200] for r in doc['reasons'][:2]]}",
            flush=True,
        )
    (out / "fidelity_sol.json").write_text(json.dumps(rows, indent=1))
    print(
        f"\n{'problem':14s} {'workload':28s} {'status':8s} {'SOL us':>9s} {'ref us':>9s} "
        f"{'ref %SOL':>8s} {'kern us':>9s} {'kern %SOL':>9s} {'score':>6s}"
    )
    for r in rows:
        print(
            f"{r['problem']:14s} {r['workload'][:28]:28s} {r['status'][:8]:8s} {_n(r['sol_us'])} "
            f"{_n(r['ref_us'])} {_p(r['ref_sol'])} {_n(r['kernel_us'])} {_p(r['kernel_sol'])} "
            f"{_n(r['sol_score'], '{:6.3f}')}"
        )
    return rows


def _n(x, fmt="{:9.2f}"):  # type: ignore[no-untyped-def]
    return fmt.format(x) if x is not None else f"{'-':>9s}"


def _p(x):  # type: ignore[no-untyped-def]
    return f"{x:8.1%}" if x is not None else f"{'-':>8s}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", default="all", choices=["spread", "sol", "thermal", "all"])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--problems", default=",".join(SOL_SAMPLE))
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    out = Path(args.out)
    if args.part in ("sol", "all"):
        part_sol(out, args.problems.split(","))
    if args.part in ("spread", "all"):
        part_spread(args.rounds, out)
    if args.part == "thermal":
        part_thermal(args.rounds, out)


def part_thermal(rounds: int, out: Path) -> None:
    """bf16 matmul 4096^3 and fp32 softmax: plain, behind the cool-down gate, at a 50 % duty."""
    from farm.harness import thermal

    timer = GpuTimer(torch.device("cuda"), torch.cuda.get_device_properties(0).L2_cache_size)
    ks = {k: v for k, v in kernels().items() if k in ("matmul_4096_bf16", "softmax_8192_fp32")}
    variants = {
        "plain": (TimingPolicy(), False),
        "cooldown": (TimingPolicy(), True),
        "duty50": (TimingPolicy(idle_ratio=1.0), False),
    }
    res: dict = {v: {k: [] for k in ks} for v in variants}
    for r in range(rounds):
        for name, (fn, make) in ks.items():
            for vname, (policy, cool) in variants.items():
                gate = thermal.cool_down(0) if cool else {"temperature_c": thermal.temperature_c(0)}
                run = timer.run(fn, make, policy)
                res[vname][name].append(
                    {
                        "median_ms": statistics.median(run.times_ms),
                        **gate,
                        "end_c": thermal.temperature_c(0),
                        "calls": len(run.times_ms),
                    }
                )
        print(f"round {r + 1}/{rounds}", flush=True)
    (out / "fidelity_thermal.json").write_text(json.dumps(res, indent=1))
    print(
        f"\n{torch.cuda.get_device_name(0)}: spread over {rounds} rounds "
        "(temperature at start..end)"
    )
    for vname in variants:
        for k in ks:
            v = [x["median_ms"] for x in res[vname][k]]
            temps = [f"{x['temperature_c']:.0f}-{x['end_c']:.0f}" for x in res[vname][k]]
            print(
                f"{vname:9s} {k:20s} {spread(v):6.2%} "
                f"{statistics.median(v) * 1e3:8.2f}us  {' '.join(temps)}"
            )


if __name__ == "__main__":
    main()
