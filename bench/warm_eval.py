"""`farm eval` cold and warm, one small CPU workload, measured in one run.

Each `farm eval` is a fresh `python -m farm eval` process and its wall time is what a user waits
for, from the command's start to its exit. Cold: `--cold`, no daemon (the trusted side imports
torch, the candidate worker starts beside it, the node's cached baselines and yardsticks are
read). Warm: the same command served by the warm evaluation daemon (`farm pool start`,
farm.eval_daemon). A first cold and a first warm evaluation fill the node's caches (baselines,
yardsticks) and the daemon's first use of the reference; they are not counted. Then `--rounds`
rounds of one cold and one warm evaluation, alternated so both see the same host load, with
`--gap` seconds between evaluations (a user's edit between two runs; the daemon uses it to
start the next candidate worker). Prints p50/p95 of both, the verdicts and the median phases.

    PYTHONPATH=. python3 bench/warm_eval.py --rounds 9 --out docs/figures/warm_eval_cpu.json
    PYTHONPATH=. python3 bench/warm_eval.py --mode test --rounds 5   # without the timing loop

FARM_HOME is a fresh temporary directory (its own caches and daemon) unless `--home` names one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
KERNEL = "def kernel(a, b):\n    return a + b\n"  # honest vector_add


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", default="vector_add")
    ap.add_argument("--workload", default="small-4k")
    ap.add_argument("--mode", default="benchmark", choices=["test", "benchmark"])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--gap", type=float, default=3.0, help="seconds between evaluations")
    ap.add_argument("--home", type=Path, help="FARM_HOME to use (default: a fresh one)")
    ap.add_argument("--out", type=Path, help="write the figures here (JSON)")
    args = ap.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="fw-", dir="/tmp"))
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "FARM_HOME": str(home), "PYTHONPATH": path}
    kernel = home / "kernel.py"
    home.mkdir(parents=True, exist_ok=True)
    kernel.write_text(KERNEL)
    try:
        figures = measure(args, env, kernel)
    finally:
        farm(env, "pool", "stop")
        if args.home is None:
            shutil.rmtree(home, ignore_errors=True)
    print_figures(figures)
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


def measure(args: argparse.Namespace, env: dict[str, str], kernel: Path) -> dict[str, Any]:
    load_before = os.getloadavg()
    started = time.monotonic()
    farm(env, "pool", "start", "--idle-exit-s", "1800")
    daemon_start_s = time.monotonic() - started
    evaluation(args, env, kernel, "--cold")  # fills the node's caches: not counted
    evaluation(args, env, kernel)  # the daemon's first use of the reference: not counted
    runs: dict[str, list[dict[str, Any]]] = {"cold": [], "warm": []}
    for _ in range(args.rounds):
        time.sleep(args.gap)
        runs["cold"].append(evaluation(args, env, kernel, "--cold"))
        time.sleep(args.gap)
        before = served(kernel.parent)
        runs["warm"].append({**evaluation(args, env, kernel), "served": served(kernel.parent)})
        if runs["warm"][-1]["served"] != before + 1:
            raise SystemExit("a warm evaluation was not served by the daemon (see its log)")
    return {
        "problem": args.problem,
        "workload": args.workload,
        "mode": args.mode,
        "rounds": args.rounds,
        "gap_s": args.gap,
        "daemon_start_s": round(daemon_start_s, 2),
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "cpus": os.cpu_count(),
        **{kind: summary(r) for kind, r in runs.items()},
    }


def evaluation(
    args: argparse.Namespace, env: dict[str, str], kernel: Path, *extra: str
) -> dict[str, Any]:
    """One `farm eval` process: its wall time (s), verdict and phases."""
    out = kernel.with_suffix(".json")
    out.unlink(missing_ok=True)
    t0 = time.monotonic()
    farm(
        env,
        "eval",
        str(kernel),
        "--problem",
        args.problem,
        "--workload",
        args.workload,
        "--device",
        "cpu",
        "--mode",
        args.mode,
        "--json",
        str(out),
        *extra,
        check=False,
    )
    wall = time.monotonic() - t0
    doc = json.loads(out.read_text()) if out.exists() else {}
    return {
        "wall_s": round(wall, 3),
        "verdict": doc.get("verdict"),
        "phases_s": (doc.get("timing") or {}).get("phases_s", {}),
    }


def served(home: Path) -> int:
    """How many evaluations the daemon of FARM_HOME `home` has served (-1: none answers)."""
    from farm.eval_daemon import client

    status = client.status(path=home / "run" / "eval.sock")
    return status.served if status else -1


def farm(env: dict[str, str], *argv: str, check: bool = True) -> None:
    subprocess.run(
        [sys.executable, "-m", "farm", *argv],
        env=env,
        check=check,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    walls = sorted(r["wall_s"] for r in runs)
    phases = {name for r in runs for name in r["phases_s"]}
    return {
        "p50_s": round(statistics.median(walls), 2),
        "p95_s": round(percentile(walls, 0.95), 2),
        "walls_s": [r["wall_s"] for r in runs],
        "verdicts": [r["verdict"] for r in runs],
        "phases_p50_s": {
            p: round(statistics.median(r["phases_s"].get(p, 0.0) for r in runs), 3)
            for p in sorted(phases)
        },
    }


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least q of the values at or below it."""
    rank = max(1, -(-len(sorted_values) * q // 1))
    return sorted_values[int(rank) - 1]


def print_figures(f: dict[str, Any]) -> None:
    print(
        f"{f['problem']} {f['workload']} on cpu, --mode {f['mode']}, {f['rounds']} rounds, "
        f"{f['gap_s']} s between evaluations, load average {f['load_average']['before'][0]:.1f}"
        f" -> {f['load_average']['after'][0]:.1f} on {f['cpus']} CPUs"
    )
    print(f"daemon start (farm pool start): {f['daemon_start_s']} s")
    for kind in ("cold", "warm"):
        s = f[kind]
        verdicts = sorted(set(map(str, s["verdicts"])))
        print(f"{kind}: p50 {s['p50_s']} s, p95 {s['p95_s']} s; verdicts {verdicts}")
        print(f"  phases p50 (s): {s['phases_p50_s']}")


if __name__ == "__main__":
    sys.exit(main())
