#!/usr/bin/env python3
"""The reference submitted verbatim against the eager baseline on npu-sim, through the farm.

For each problem, the problem's own `reference.py` with `kernel = reference` is evaluated on
npu-sim (benchmark mode, the problem's small workloads) as any submission is; the table gives,
per workload, the submission's simulated time, the eager baseline's (the same reference costed
in the trusted replay, farm.harness.simreplay.reference_cost), T_SOL and the SOL score. The
baseline costs what the reference does, so the verbatim reference scores 0.5, or 1 where the
reference is at the bound (one launch, whose cost T_SOL includes).

    PYTHONPATH=. python3 bench/npu_sim_eager.py [--problems vector_add,softmax,rmsnorm,matmul]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", default="vector_add,softmax,rmsnorm,matmul")
    args = parser.parse_args()

    from farm.harness.supervisor import evaluate
    from farm.suite.loader import load_suite

    suite = load_suite("core-v1")
    head = ("problem", "workload", "verdict", "reference (us)", "eager baseline (us)", "SOL (us)")
    print("| " + " | ".join(head) + " | SOL score |")
    print("|---|---|---|---|---|---|---|")
    for name in args.problems.split(","):
        problem = suite.problem(name)
        source = problem.reference_path.read_text() + "\n\nkernel = reference\n"
        path = Path(tempfile.mkdtemp(prefix="farm-eager-")) / f"{name}.py"
        path.write_text(source)
        small = [w.id for w in problem.workloads if w.small]
        doc = evaluate(
            path, problem=name, device="npu-sim", mode="benchmark", workloads=small
        ).to_json()
        for w in doc["workloads"]:
            if w.get("secret"):
                continue
            eager = (w.get("baseline_ms") or {}).get("eager")
            cells = [w.get("time_ms"), eager, w.get("sol_ms")]
            us = ["-" if c is None else f"{1e3 * c:.2f}" for c in cells]
            score = w.get("sol_score")
            print(
                f"| {name} | {w['id']} | {w['status']} | {' | '.join(us)} | "
                f"{'-' if score is None else f'{score:.3f}'} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
