"""The wall-clock rule's yardstick against honest kernels: for each workload, the timing loop's
cost per call that the trusted side measures itself (a call that does nothing, in the supervisor's
process: farm.harness.reference.loop_yardstick) beside what an honest candidate's request
actually cost per call beyond its reported device time, seen from outside its process (over the
timing windows the supervisor timed).

    python3 bench/wall_clock_calibration.py [--device cuda] [--match softmax,layernorm] [--json F]

Benchmark mode, no baselines (the rule no longer needs them), the default timing policy, each
problem's small workloads. Prints one row per workload: timed calls, the candidate's per-call
harness cost, the calibration, their ratio, and any WALL_CLOCK_MISMATCH; exits 1 on a finding
against an honest kernel. docs/security.md records a run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import evaluate_small  # noqa: E402


def rows_for(path: Path, device: str) -> list[dict]:
    from farm.harness.timing_stats import WindowRecord, window_yardstick

    doc = evaluate_small(path, device, baselines=False)
    findings = doc["guard"]["findings"]
    found = {f.get("workload") for f in findings if f["code"] == "WALL_CLOCK_MISMATCH"}
    rows = []
    for entry in doc["workloads"]:
        timing = entry.get("timing") or {}
        if not timing.get("count"):
            rows.append({"file": path.name, "workload": entry["id"], "verdict": doc["verdict"]})
            continue
        per_call, floor = window_yardstick([WindowRecord.from_json(w) for w in timing["windows"]])
        calibration = timing.get("harness_overhead_ms")
        rows.append(
            {
                "file": path.name,
                "workload": entry["id"],
                "verdict": doc["verdict"],
                "calls": timing["count"],
                "median_ms": timing["median_ms"],
                "candidate_overhead_ms": round(per_call, 4),
                "calibration_ms": None if calibration is None else round(calibration, 4),
                "candidate_floor_ms": round(floor, 3),
                "calibration_floor_ms": timing.get("harness_floor_ms"),
                "ratio": round(per_call / calibration, 3) if calibration else None,
                "mismatch": entry["id"] in found,
            }
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--match", default="", help="comma-separated prefixes of solution files")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    prefixes = tuple(m for m in args.match.split(",") if m)
    files = sorted((ROOT / "tests" / "solutions" / "correct").glob("*.py"))
    rows: list[dict] = []
    for path in files:
        if prefixes and not path.name.startswith(prefixes):
            continue
        rows += rows_for(path, args.device)
        print(json.dumps(rows[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(
        f"\n{'file':34} {'workload':28} {'verdict':9} {'calls':>6} {'cand ms':>8} "
        f"{'calib ms':>8} {'ratio':>6}  mismatch"
    )
    for r in rows:
        if "calls" not in r:
            print(f"{r['file'][:34]:34} {r['workload'][:28]:28} {r['verdict']:9}")
            continue
        print(
            f"{r['file'][:34]:34} {r['workload'][:28]:28} {r['verdict'][:9]:9} {r['calls']:6d} "
            f"{r['candidate_overhead_ms']:8.3f} {r['calibration_ms'] or 0:8.3f} "
            f"{r['ratio'] or 0:6.2f}  {'YES' if r['mismatch'] else ''}"
        )
    return 1 if any(r.get("mismatch") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
