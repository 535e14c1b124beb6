"""Evaluate every known cheat (tests/hacks/) and every honest kernel (tests/solutions/correct/)
on one device and tabulate verdict against expectation.

A cheat must never PASS (and should get the verdict its header names); an honest kernel must
PASS (zero false positives). Each file runs through the whole farm (supervisor, sandboxed worker,
guard) in benchmark mode on its problem's small workloads with a short timing budget, so the
table measures the defences, not kernel speed.
Usage: python bench/guard_table.py --device cuda|cpu|npu-sim [--only hacks|honest] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import evaluate_small  # noqa: E402
from tests.harness.conftest import header  # noqa: E402  (the files' `# key: value` headers)


def files(only: str) -> list[tuple[str, Path]]:
    hacks = sorted(
        p for p in (ROOT / "tests" / "hacks").glob("*.py") if not p.name.startswith("test_")
    )
    honest = sorted((ROOT / "tests" / "solutions" / "correct").glob("*.py"))
    chosen = []
    if only in ("all", "hacks"):
        chosen += [("cheat", p) for p in hacks]
    if only in ("all", "honest"):
        chosen += [("honest", p) for p in honest]
    return chosen


def evaluate_one(kind: str, path: Path, device: str) -> dict:
    head = header(path)
    t0 = time.time()
    policy = {"budget_ms": 300, "warmup_ms": 50}
    doc = evaluate_small(path, device, compile_baseline=False, policy=policy)
    expect = head.get("expect", "PASSED")
    codes = sorted(
        {r["code"] for r in doc["reasons"]}
        | {f["code"] for f in doc["guard"]["findings"] if f.get("severity") == "reject"}
    )
    ok = doc["verdict"] == "PASSED" if kind == "honest" else doc["verdict"] != "PASSED"
    return {
        "kind": kind,
        "file": path.name,
        "problem": head["problem"],
        "expect": expect,
        "verdict": doc["verdict"],
        "ok": ok,
        "as_expected": doc["verdict"] == expect,
        "caught_by": codes,
        "seconds": round(time.time() - t0, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--only", default="all", choices=["all", "hacks", "honest"])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--start", type=int, default=0, help="skip the first N files")
    ap.add_argument("--match", default="", help="only files whose name starts with one of these")
    args = ap.parse_args()
    prefixes = tuple(m for m in args.match.split(",") if m)
    chosen = [(k, p) for k, p in files(args.only) if not prefixes or p.name.startswith(prefixes)]
    rows = []
    for kind, path in chosen[args.start :]:
        try:
            rows.append(evaluate_one(kind, path, args.device))
        except Exception as exc:
            rows.append(
                {
                    "kind": kind,
                    "file": path.name,
                    "verdict": f"ERROR {exc}"[:80],
                    "ok": False,
                    "as_expected": False,
                    "expect": "?",
                    "caught_by": [],
                    "seconds": 0,
                }
            )
        r = rows[-1]
        print(
            f"{r['kind']:6s} {r['file'][:44]:44s} expect {r['expect']:13s} got {r['verdict']:13s} "
            f"{'ok' if r['ok'] else 'FAIL'}  {','.join(r['caught_by'])[:60]}",
            flush=True,
        )
    out = Path(args.out) / f"guard_table_{args.device}_{args.only}.json"
    out.write_text(json.dumps(rows, indent=1))
    cheats = [r for r in rows if r["kind"] == "cheat"]
    honest = [r for r in rows if r["kind"] == "honest"]
    print(
        f"\ncheats not passed: {sum(r['ok'] for r in cheats)}/{len(cheats)} "
        f"(verdict as expected {sum(r['as_expected'] for r in cheats)}); "
        f"honest passed: {sum(r['ok'] for r in honest)}/{len(honest)}"
    )


if __name__ == "__main__":
    main()
