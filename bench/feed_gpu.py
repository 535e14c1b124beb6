"""Inputs handed over by the trusted side (farm.harness.feed) on a GPU node, against the tree
before the change: the same honest kernels evaluated with each farm package, side by side.

    PYTHONPATH=. python3 bench/feed_gpu.py --out DIR [--old OLD_FARM_PARENT] [--rounds 3]

`--old` names a directory holding an earlier `farm` package (e.g. from
`git archive <commit> farm | tar -x -C OLD`); each tree is run in its own process. Every
evaluation uses the `process` runner (FARM_ALLOW_UNSANDBOXED=1 is set here). Prints a table
last: tree, kernel, verdict, how inputs and outputs travelled, the scored time (ms) of each
round and their spread, the evaluation's wall and its timing phase; writes DIR/feed_gpu.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNELS = [
    ("tests/solutions/correct/vector_add__triton.py", "vector_add"),
    ("tests/solutions/correct/softmax__triton.py", "softmax"),
    ("tests/solutions/correct/rmsnorm__triton.py", "rmsnorm"),
    ("tests/solutions/correct/matmul__triton.py", "matmul"),
]
ONE = """
import json, sys, time
from farm.harness.supervisor import evaluate
path, problem = sys.argv[1], sys.argv[2]
t = time.perf_counter()
d = evaluate(path, problem=problem, device="cuda", mode="benchmark", sandbox="process",
             baselines=False)
d = d.to_json() if hasattr(d, "to_json") else d  # a Result since the harness typed it
wall = time.perf_counter() - t
print(json.dumps({
    "verdict": d["verdict"],
    "reasons": [r["code"] + ": " + r["detail"][:200] for r in d["reasons"]][:3],
    "transport": d["environment"].get("output_transport"),
    "times": {w["id"]: w["time_ms"] for w in d["workloads"]},
    "wall_s": round(wall, 2),
    "timing_s": d["timing"]["phases_s"].get("timing"),
}))
"""


def evaluate(tree: Path, path: str, problem: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree), "FARM_ALLOW_UNSANDBOXED": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", ONE, str(REPO / path), problem],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,  # `python -c` puts its working directory first on the path
        timeout=600,
        check=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"verdict": "FAILED", "reasons": [proc.stderr[-800:]], "times": {}}
    return json.loads(lines[-1])


def spread_pct(values: list[float]) -> float:
    """(max - min) / median of the rounds' scored times, in percent."""
    mid = statistics.median(values)
    return 100 * (max(values) - min(values)) / mid if mid else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--old", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    trees = [("new", REPO)] + ([("old", args.old)] if args.old else [])
    rows = []
    for _ in range(args.rounds):
        for name, tree in trees:  # interleaved: the trees see the same GPU state
            for path, problem in KERNELS:
                rows.append({"tree": name, "kernel": path, **evaluate(tree, path, problem)})
                print(json.dumps(rows[-1]), flush=True)  # a cut-short run keeps what ran
                (args.out / "feed_gpu.json").write_text(json.dumps(rows, indent=1))
    print("| tree | kernel | verdicts | transport | scored ms per round | spread % | wall s |")
    print("|---|---|---|---|---|---|---|")
    for name, _ in trees:
        for path, _p in KERNELS:
            mine = [r for r in rows if r["tree"] == name and r["kernel"] == path]
            times = [t for r in mine for t in r["times"].values() if t]
            verdicts = ",".join(sorted({r["verdict"] for r in mine}))
            walls = [r.get("wall_s", 0) for r in mine]
            print(
                f"| {name} | {Path(path).stem} | {verdicts} | {mine[0].get('transport')} | "
                f"{', '.join(f'{t:.4f}' for t in times)} | "
                f"{spread_pct(times) if times else 0:.2f} | {statistics.median(walls):.1f} |"
            )
            for r in mine:
                if r["verdict"] != "PASSED":
                    print(f"  {name} {Path(path).stem}: {r['reasons']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
