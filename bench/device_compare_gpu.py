"""Correctness compared on the device, on a GPU node: an honest and a wrong candidate under each
sandbox runner (their outputs handed over by CUDA IPC, farm.harness.cudaipc), whether a legacy
IPC handle opens across a PID namespace, and a KernelBench-sized elementwise workload (ReLU
over 4096 x 393216 fp32: 6.4 GB in, 6.4 GB out) evaluated end to end.

    PYTHONPATH=. python3 bench/device_compare_gpu.py --out DIR [--runners process,bwrap]

Runs as root with bubblewrap on PATH for the bwrap rows (bench/gpu_sandbox_node.sh shows how a
node without it gets it); the process rows need FARM_ALLOW_UNSANDBOXED=1 (set here). The
problem is a one-problem suite written under DIR (so nothing outside DIR is touched). Writes
DIR/device_compare.json and prints a table last: runner, case, workload, mode, verdict, how the
outputs travelled, wall seconds and the phase breakdown.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PROBLEM_YAML = """\
name: relu
category: elementwise
description: "ReLU of a matrix (KernelBench level 1 problem 19 at its default size)."
signature: "relu(x) -> torch.relu(x)"
inputs:
  - {name: x, shape: [B, D]}
outputs:
  - {name: out, shape: [B, D]}
dtypes: [float32]
pass: forward
languages: [pytorch, triton, cuda]
tolerance:
  float32: {atol: 1.0e-6, rtol: 1.0e-6}
flops: {expr: "B * D", unit: vector}
bytes: io
workloads:
  - id: kb-default
    source: "KernelBench level 1 19_ReLU: batch_size 4096, dim 393216"
    axes: {B: 4096, D: 393216}
    dtype: float32
  - id: small
    axes: {B: 256, D: 4096}
    dtype: float32
    small: true
"""
REFERENCE = """\
import torch


def reference(x):
    return torch.relu(x)


def make_inputs(axes, dtype, device, generator):
    x = torch.randn(axes["B"], axes["D"], device=device, generator=generator)
    return (x.to(dtype),)
"""
CANDIDATES = {
    "honest": "import torch\n\n\ndef kernel(x):\n    return torch.relu(x)\n",
    # right everywhere but one element: the worst-element report must find it
    "wrong": (
        "import torch\n\n\ndef kernel(x):\n    y = torch.relu(x)\n"
        "    y.view(-1)[y.numel() // 3] += 1.0\n    return y\n"
    ),
}
# (case, workload, mode)
CASES = [
    ("honest", "small", "benchmark"),
    ("wrong", "small", "test"),
    ("honest", "kb-default", "test"),
    ("wrong", "kb-default", "test"),
    ("honest", "kb-default", "benchmark"),
]
PIDNS_CHILD = """
import sys, torch
from farm.harness import cudaipc
x = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
entries, keep = cudaipc.export([x])
print(__import__("json").dumps(entries), flush=True)
sys.stdin.readline()
"""


def write_suite(root: Path) -> Path:
    from farm.suite import manifest

    suite = root / "device-compare"
    shutil.rmtree(suite, ignore_errors=True)
    (suite / "relu").mkdir(parents=True)
    (suite / "relu" / "problem.yaml").write_text(PROBLEM_YAML)
    (suite / "relu" / "reference.py").write_text(REFERENCE)
    manifest.write(suite)
    return suite


def evaluate_case(suite: Path, out: Path, runner: str, case: str, workload: str, mode: str):
    from farm.harness.supervisor import evaluate

    src = out / f"{case}.py"
    src.write_text(CANDIDATES[case])
    started = time.perf_counter()
    try:
        doc = evaluate(
            src,
            problem="relu",
            suite=str(suite),
            device="cuda",
            mode=mode,
            workloads=[workload],
            sandbox=runner,
            baselines=False,
        ).to_json()
    except Exception as exc:  # a farm failure is a row too
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    wall = time.perf_counter() - started
    w = doc["workloads"][0]
    return {
        "verdict": doc["verdict"],
        "codes": [r["code"] for r in doc["reasons"]][:4],
        "detail": (doc["reasons"][0]["detail"] if doc["reasons"] else "")[:300],
        "transport": doc["environment"].get("output_transport"),
        "sandbox": doc["environment"].get("sandbox"),
        "wall_s": round(wall, 2),
        "phases_s": doc["timing"].get("phases_s", {}),
        "time_ms": w.get("time_ms"),
        "correctness": w.get("correctness"),
    }


def pid_namespace_probe() -> dict[str, str]:
    """Does a legacy IPC handle made in another PID namespace open here? (unshare, as root)"""
    import torch

    from farm.harness import cudaipc

    results = {}
    for name, prefix in (
        ("same_pid_ns", []),
        ("own_pid_ns", ["unshare", "--pid", "--fork", "--mount-proc"]),
    ):
        if prefix and shutil.which("unshare") is None:
            results[name] = "not run: no unshare"
            continue
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        child = subprocess.Popen(
            [*prefix, sys.executable, "-c", PIDNS_CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            line = child.stdout.readline()  # type: ignore[union-attr]
            if not line:
                results[name] = "child failed: " + child.stderr.read()[-300:]  # type: ignore[union-attr]
                continue
            entries = cudaipc.parse(json.loads(line))
            expected = [torch.empty(1 << 20, device="cuda")]
            (got,) = cudaipc.receive(entries, expected, torch.device("cuda"))
            ok = bool(torch.equal(got, torch.arange(1 << 20, device="cuda", dtype=torch.float32)))
            results[name] = "opens, bytes equal" if ok else "opens, bytes DIFFER"
        except Exception as exc:
            results[name] = f"fails: {exc}"[:200]
        finally:
            child.communicate("\n", timeout=30)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--runners", default="process,bwrap")
    parser.add_argument(
        "--cases", default="all", help="all; small (the small rows); quick (the test-mode rows)"
    )
    args = parser.parse_args()
    os.environ.setdefault("FARM_ALLOW_UNSANDBOXED", "1")
    args.out.mkdir(parents=True, exist_ok=True)
    suite = write_suite(args.out / "suites")
    report = {"pid_namespace": pid_namespace_probe(), "rows": []}
    print("legacy CUDA IPC:", report["pid_namespace"], flush=True)
    cases = [c for c in CASES if args.cases == "all" or c[1] == "small" or args.cases == "quick"]
    if args.cases == "quick":  # correctness only
        cases = [c for c in cases if c[2] == "test"]
    for runner in args.runners.split(","):
        if runner == "bwrap" and shutil.which("bwrap") is None:
            report["rows"].append({"runner": runner, "error": "bwrap not on PATH"})
            continue
        for case, workload, mode in cases:
            if runner != "process" and workload != "small" and (mode, case) != ("test", "honest"):
                continue  # under the other runners, one large row is enough
            row = {"runner": runner, "case": case, "workload": workload, "mode": mode}
            row.update(evaluate_case(suite, args.out, runner, case, workload, mode))
            report["rows"].append(row)
            print(json.dumps(row), flush=True)
    (args.out / "device_compare.json").write_text(json.dumps(report, indent=2))
    print_table(report)
    return 0


def print_table(report: dict) -> None:
    print("\nlegacy CUDA IPC handle from another process:", report["pid_namespace"])
    head = f"{'runner':8} {'case':7} {'workload':11} {'mode':9} {'verdict':14} {'wall s':>7}"
    print(head + "  transport / phases (s)")
    for r in report["rows"]:
        if "error" in r:
            print(f"{r['runner']:8} {r.get('case', '-'):7} error: {r['error']}")
            continue
        phases = " ".join(f"{k}={v:.1f}" for k, v in r["phases_s"].items())
        line = (
            f"{r['runner']:8} {r['case']:7} {r['workload']:11} {r['mode']:9} {r['verdict']:14} "
            f"{r['wall_s']:7.1f}  {r['transport']} | {phases}"
        )
        print(textwrap.shorten(line, 200))


if __name__ == "__main__":
    sys.exit(main())
