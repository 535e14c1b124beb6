"""npu-sim benchmark: simulated time, SOL fraction and simulation wall time per small workload.

For every problem of core-v1 with a `small: true` workload, costs on npu-sim-v1:
- the PyTorch reference (through the TorchDispatchMode), and
- the Triton solution in tests/solutions/correct/<problem>__*.py, where one exists,
and prints their simulated time, SOL fraction (T_SOL / T_sim) and the wall time the measured
call took (one warm-up call first, as the harness checks correctness before timing), then the
median and worst wall time. Run on one CPU thread:

    python3 bench/npu_sim_bench.py [--suite core-v1] [--write docs/npu-sim-bench.md]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from farm.hardware import npu_sim  # noqa: E402

measure = npu_sim.install()  # before triton (or any solution) is imported

import torch  # noqa: E402

from farm.hardware.specs import get_spec  # noqa: E402
from farm.sol import UnsupportedWorkload, sol_bound  # noqa: E402
from farm.suite.loader import load_suite  # noqa: E402

SOLUTIONS = ROOT / "tests" / "solutions" / "correct"


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def triton_solution(problem: str) -> Path | None:
    """The first Triton solution file for `problem` (name order), or None."""
    for path in sorted(SOLUTIONS.glob(f"{problem}__*.py")):
        if "triton.jit" in path.read_text():
            return path
    return None


def run_one(fn: Any, inputs: list, sol_ms: float | None) -> dict[str, Any]:
    """Warm up once (uncounted), then time one measured call."""
    try:
        fn(*[t.clone() for t in inputs])
        start = time.perf_counter()
        report = measure(fn, inputs)
        wall = time.perf_counter() - start
    except Exception as exc:  # a row of the table, not a crash of the bench
        return {"status": f"{type(exc).__name__}: {str(exc)[:60]}"}
    frac = sol_ms / report.time_ms if sol_ms else None
    return {
        "status": "ok",
        "sim_ms": report.time_ms,
        "sol_frac": frac,
        "wall_s": wall,
        "launches": report.launches,
        "output": report.output,
    }


def bench_workload(problem: Any, workload: Any, ref: Any, sol: Any) -> list[dict[str, Any]]:
    gen = torch.Generator().manual_seed(0)
    inputs = list(ref.make_inputs(workload.axes, getattr(torch, workload.dtype), "cpu", gen))
    try:
        sol_ms: float | None = sol_bound(problem, workload, get_spec("npu-sim-v1")).time_ms
    except UnsupportedWorkload:
        sol_ms = None
    rows = [{"who": "reference", **run_one(ref.reference, inputs, sol_ms)}]
    if sol is not None:
        row = run_one(sol.kernel, inputs, sol_ms)
        if row["status"] == "ok" and rows[0]["status"] == "ok":
            row["status"] = _agree(row["output"], rows[0]["output"], problem, workload)
        rows.append({"who": "triton", **row})
    for row in rows:
        row.update(problem=problem.name, workload=workload.id, dtype=workload.dtype, sol_ms=sol_ms)
        row.pop("output", None)
    return rows


def _agree(out: Any, ref_out: Any, problem: Any, workload: Any) -> str:
    tol = problem.tolerance_for(workload.dtype)
    outs = out if isinstance(out, (tuple, list)) else [out]
    refs = ref_out if isinstance(ref_out, (tuple, list)) else [ref_out]
    for o, r in zip(outs, refs):
        if not torch.allclose(o.double(), r.double(), atol=tol.atol * 10, rtol=tol.rtol * 10):
            return "mismatch"
    return "ok"


def collect(suite_name: str) -> list[dict[str, Any]]:
    suite = load_suite(suite_name)
    rows: list[dict[str, Any]] = []
    for name in sorted(suite.problems):
        problem = suite.problem(name)
        small = [w for w in problem.workloads if w.small]
        if not small:
            continue
        ref = _load(problem.reference_path, f"ref_{name}")
        path = triton_solution(name)
        sol = _load(path, f"sol_{name}") if path else None
        for workload in small:
            rows.extend(bench_workload(problem, workload, ref, sol))
    return rows


def _fmt(row: dict[str, Any]) -> str:
    if row["status"] != "ok" and "sim_ms" not in row:
        return f"| {row['problem']} | {row['workload']} | {row['who']} | {row['status']} | | | |"
    frac = f"{row['sol_frac']:.3f}" if row.get("sol_frac") is not None else "-"
    status = "" if row["status"] == "ok" else f" ({row['status']})"
    return (
        f"| {row['problem']} | {row['workload']} | {row['who']}{status} | "
        f"{row['sim_ms'] * 1e3:.2f} | {frac} | {row['launches']} | {row['wall_s']:.3f} |"
    )


def render(rows: list[dict[str, Any]]) -> str:
    walls = [r["wall_s"] for r in rows if "wall_s" in r]
    worst = max(rows, key=lambda r: r.get("wall_s", -1.0))
    lines = [
        "| problem | workload | code | simulated µs | SOL fraction | launches | wall s |",
        "|---|---|---|---|---|---|---|",
        *[_fmt(r) for r in rows],
        "",
        f"measured calls: {len(walls)}; wall time median {statistics.median(walls):.3f} s, "
        f"worst {max(walls):.3f} s ({worst['problem']} {worst['workload']} {worst['who']}); "
        f"{sum(w <= 1.0 for w in walls)} of {len(walls)} within 1 s",
    ]
    failed = [r for r in rows if r["status"] != "ok"]
    if failed:
        lines.append(f"not ok: {len(failed)} rows (status shown in the table)")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="core-v1")
    parser.add_argument("--write", type=Path, help="also write a markdown report here")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = collect(args.suite)
    table = render(rows)
    print(table)
    if args.write:
        head = (
            f"# npu-sim benchmark\n\nMeasured {datetime.date.today().isoformat()} on "
            f"{platform.processor() or platform.machine()} ({platform.system()}), one torch "
            f"thread, Python {platform.python_version()}, torch {torch.__version__}; "
            f"`python3 bench/npu_sim_bench.py --write {args.write}`.\n\n"
            "Wall time is that of the one measured call (Triton interpreter + cost hooks, or "
            "the PyTorch cost mode), after one uncounted warm-up call; `install()` itself "
            "(importing triton and torch._dynamo, snapshotting for the integrity checks) "
            "takes about 2 s once per process. SOL fraction = T_SOL / T_sim with T_SOL from "
            "`farm.sol` for npu-sim-v1, which includes the 8.5 µs launch floor (one launch "
            "and one program instance, docs/hardware.md): a one-launch kernel on a small "
            "workload is near 1, and each further launch costs as much again, so the number "
            "of launches decides most of the ranking.\n\n"
        )
        args.write.write_text(head + table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
