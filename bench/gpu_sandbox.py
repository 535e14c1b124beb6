"""The sandbox on a GPU node, end to end: honest kernels of each kind (PyTorch, Triton, CUDA C++
through load_inline) must PASS under each runner, hostile ones (a hang, device and host memory
hogs) must end with the right status within their limits, and a program in a GPU sandbox must
be refused the network, writes outside its work dir, host secrets, other GPUs and children
that outlive it.

    python3 bench/gpu_sandbox.py [--runners bwrap,process] [--json out.json]

Run it on the GPU node as root with the node's tools on PATH (bubblewrap, util-linux) and the
sandbox account created (deploy/sandbox/add-sandbox-user.sh); `--runners process` needs
FARM_ALLOW_UNSANDBOXED=1. Prints one row per runner x submission (verdict, reason codes, wall
seconds) and the probe's outcomes; docs/security.md records a run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
KERNELS = REPO / "bench" / "gpu_sandbox_kernels"
CASES = [
    # (file, workload, mode)
    (KERNELS / "softmax_pytorch.py", "small", "benchmark"),
    (REPO / "tests" / "solutions" / "correct" / "softmax__triton.py", "small", "benchmark"),
    (KERNELS / "vector_add_cuda.py", "small-4k", "benchmark"),
    (KERNELS / "hang.py", "small", "test"),
    (KERNELS / "gpu_memory_hog.py", "small", "test"),
    (KERNELS / "gpu_memory_hog_uncapped.py", "small", "test"),
    (KERNELS / "host_memory_hog.py", "small", "test"),
]
PROBE = r"""
import os, socket, subprocess, sys
def attempt(name, fn):
    try:
        fn(); print(f"{name}=allowed")
    except Exception as exc:
        print(f"{name}=refused:{type(exc).__name__}")
attempt("network", lambda: socket.create_connection(("127.0.0.1", 22), timeout=1).close())
attempt("write_outside_workdir", lambda: open("/var/tmp/farm-probe", "w").write("x"))
attempt("read_host_home", lambda: os.listdir("/root"))
attempt("other_gpu_node", lambda: os.stat("/dev/nvidia1"))
import torch
print(f"visible_gpus={torch.cuda.device_count()}")
print(f"gpu_works={float(torch.ones(4, device='cuda').sum()) == 4.0}")
subprocess.Popen(["sleep", "600"], start_new_session=True)
print("child=started")
sys.stdout.flush()
"""


def header(path: Path) -> dict[str, str]:
    fields = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# ") or ":" not in line:
            break
        key, _, value = line[2:].partition(":")
        fields[key.strip()] = value.strip()
    return fields


def evaluate_case(runner: str, path: Path, workload: str, mode: str) -> dict:
    from farm.harness.supervisor import evaluate

    meta = header(path)
    started = time.perf_counter()
    try:
        doc = evaluate(
            path,
            problem=meta["problem"],
            device="cuda",
            mode=mode,
            sandbox=runner,
            workloads=[workload],
            baselines=False,
        ).to_json()
        verdict, codes = doc["verdict"], sorted({r["code"] for r in doc["reasons"]})
        phases = doc.get("timing", {}).get("phases_s", {})
        details = [f"{r['code']}: {r['detail'][-1500:]}" for r in doc["reasons"]]
        details += [f"{f['code']}: {f['detail'][:200]}" for f in doc["guard"]["findings"]]
    except Exception as exc:  # a farm failure is a row too
        verdict, codes, phases = "FARM_ERROR", [type(exc).__name__], {}
        details = [str(exc)[-3000:]]
    wall = time.perf_counter() - started
    expect = meta.get("expect", "PASSED")
    met = verdict == expect or expect in codes
    return {
        "runner": runner,
        "submission": path.name,
        "problem": meta["problem"],
        "workload": workload,
        "verdict": verdict,
        "codes": codes,
        "expect": expect,
        "met": met,
        "wall_s": round(wall, 2),
        "phases_s": phases,
        "details": details,
    }


def probe(runner_name: str) -> dict:
    """Run the probe program in a sandbox with GPU 0 assigned; then look for survivors."""
    from farm.harness.channel import WorkerSpec, worker_env
    from farm.sandbox import DeviceAssignment, Limits, get_runner

    runner = get_runner(runner_name)
    with tempfile.TemporaryDirectory(prefix="farm-probe-") as tmp:
        spec = WorkerSpec(device="cuda", read_dirs=[], workdir=Path(tmp))
        proc = runner.spawn(
            [sys.executable, "-c", PROBE],
            workdir=Path(tmp),
            env=worker_env(spec),
            limits=Limits(wall_seconds=120),
            device=DeviceAssignment(vendor="nvidia", index=0),
        )
        out = proc.stdout.read().decode(errors="replace")
        err = proc.stderr.read().decode(errors="replace")
        proc.wait(timeout=120)
        proc.close()
    time.sleep(0.5)
    user = os.environ.get("FARM_SANDBOX_USER", "farm-sandbox")
    left = subprocess.run(["pgrep", "-u", user, "-a"], capture_output=True, text=True).stdout
    result = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    result["children_left"] = left.strip() or "none"
    if not out.strip():
        result["stderr"] = err[-1500:]
    return {"runner": runner_name, **result}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runners", default="bwrap")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--only", help="substring of the submission file names to run")
    args = ap.parse_args()
    from farm.sandbox.toolchain import node_toolchain

    tools = node_toolchain("nvidia")
    rows, probes = [], []
    for runner in args.runners.split(","):
        for path, workload, mode in CASES:
            if args.only and args.only not in path.name:
                continue
            rows.append(evaluate_case(runner, path, workload, mode))
            print(json.dumps(rows[-1]), flush=True)
        if runner != "process":
            probes.append(probe(runner))
            print(json.dumps(probes[-1]), flush=True)
    report = {
        "toolchain": {**tools.found, "env": tools.env, "binds": [str(p) for p in tools.read_only]},
        "rows": rows,
        "probes": probes,
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    print(f"\ntoolchain: {json.dumps(report['toolchain'])}")
    print(f"{'runner':8} {'submission':28} {'verdict':14} {'ok':3} {'wall s':>7}  codes")
    for r in rows:
        ok = "yes" if r["met"] else "NO"
        codes = ",".join(c for c in r["codes"] if c != "NOT_RUN")[:70]
        name, verdict = r["submission"], r["verdict"]
        print(f"{r['runner']:8} {name:28} {verdict:14} {ok:3} {r['wall_s']:7.1f}  {codes}")
    for p in probes:
        print("probe", json.dumps(p))
    return 0 if all(r["met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
