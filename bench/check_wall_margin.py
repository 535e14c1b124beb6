"""The check-wall rule's and the pick bound's margins on honest solutions.

Evaluates every file of tests/solutions/correct (and compiled/) with the farm on one device
(benchmark mode, default workloads, no baselines: the allowances are the supervisor's own) and
prints, per workload, the scored time, the warmest check round's wall, the check path's measured
overhead and floor, the rule's ratio (warm wall - allowance) / scored time (the rule rejects above
CHECK_WALL_RATIO), the raw ratio warm wall / scored time, and the slowest pick reply against its
bound. The last line holds the largest ratios seen.

    PYTHONPATH=. python3 bench/check_wall_margin.py --device cpu [--match softmax] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from farm.guard import plausibility
from farm.harness import windows
from farm.harness.supervisor import evaluate

SOLUTIONS = Path(__file__).resolve().parent.parent / "tests" / "solutions"
PROBLEM = re.compile(r"^# problem: (\S+)", re.M)


def rows(path: Path, device: str) -> list[dict[str, Any]]:
    """One row per timed workload of one honest file."""
    found = PROBLEM.search(path.read_text())
    problem = found.group(1) if found else path.name.split("__")[0]
    doc = evaluate(
        path, problem=problem, device=device, mode="benchmark", baselines=False
    ).to_json()
    out = []
    for w in doc["workloads"]:
        checks, timing = w.get("correctness") or {}, w.get("timing") or {}
        walls, time_ms = checks.get("walls_ms") or [], w.get("time_ms")
        if not time_ms or len(walls) < 2:
            out.append({"file": path.name, "workload": w["id"], "status": w["status"]})
            continue
        warm = min(walls[1:])
        overhead, floor = checks.get("overhead_ms") or 0.0, checks.get("floor_ms") or 0.0
        allowance = (
            plausibility.CHECK_OVERHEAD_RATIO * overhead + plausibility.CHECK_FLOOR_RATIO * floor
        )
        picks = timing.get("picks_ms") or []
        out.append(
            {
                "file": path.name,
                "workload": w["id"],
                "status": w["status"],
                "verdict": doc["verdict"],
                "time_ms": time_ms,
                "warm_check_ms": warm,
                "overhead_ms": overhead,
                "floor_ms": floor,
                "rule_ratio": (warm - allowance) / time_ms,
                "raw_ratio": warm / time_ms,
                "picks_max_ms": max(picks, default=0.0),
                "picks_bound_ms": windows.PICKS_FIXED_MS,
            }
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--match", default="")
    ap.add_argument("--json")
    args = ap.parse_args()
    files = sorted((SOLUTIONS / "correct").glob("*.py")) + sorted(
        (SOLUTIONS / "compiled").glob("*.py")
    )
    table = []
    for path in files:
        if args.match and not re.search(args.match, path.name):
            continue
        for row in rows(path, args.device):
            table.append(row)
            print(json.dumps(row), flush=True)
    ratios = [r["rule_ratio"] for r in table if "rule_ratio" in r]
    raws = [r["raw_ratio"] for r in table if "raw_ratio" in r]
    picks = [r["picks_max_ms"] for r in table if "picks_max_ms" in r]
    summary = {
        "workloads": len(ratios),
        "max_rule_ratio": max(ratios, default=None),
        "max_raw_ratio": max(raws, default=None),
        "max_picks_ms": max(picks, default=None),
        "not_passed": [r for r in table if r.get("status") != "PASSED"],
    }
    print(json.dumps(summary))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": table, "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
