"""npu-sim trusted replay: sampling error and wall time at real sizes.

Two measurements, on one CPU thread:

- `sampling`: the naive/tiled/fused kernels of tests/solutions/npu_sim at sizes where full
  simulation is affordable, replayed twice: every program instance and every loop iteration
  run (full simulation), and with the sampling rule (farm.hardware.npu_sim.replay). Prints
  both simulated times, their relative difference and both wall times.
- `real`: every Triton solution of tests/solutions/correct and tests/solutions/npu_sim on
  every workload of its core-v1 problem at its real size, plus the eager reference: the wall
  time of the replay's counting (inputs are zeros: costs depend on shapes and masks only, and
  no core-v1 kernel branches on data), the simulated time and whether a launch was sampled.

    PYTHONPATH=. python3 bench/npu_sim_replay_bench.py sampling
    PYTHONPATH=. python3 bench/npu_sim_replay_bench.py real [--problems softmax,matmul]
"""

from __future__ import annotations

import argparse
import os
import platform
import runpy
import sys
import time
from pathlib import Path
from typing import Any

os.environ["TRITON_INTERPRET"] = "1"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from farm.hardware.npu_sim import replay as rp  # noqa: E402
from farm.hardware.npu_sim import sampling as sp  # noqa: E402
from farm.hardware.npu_sim.record import record_call  # noqa: E402
from farm.harness import runtime  # noqa: E402
from farm.harness.simreplay import reference_cost  # noqa: E402
from farm.suite.loader import load_suite  # noqa: E402

SOLUTIONS = ROOT / "tests" / "solutions"
SAMPLING_SHAPES = {
    "softmax": {"M": 96, "N": 1000},
    "rmsnorm": {"M": 96, "N": 1000},
    "matmul": {"M": 160, "N": 224, "K": 640},
    "attention": {"B": 1, "H": 2, "SQ": 160, "SK": 100, "D": 64},
}


def _inputs(problem: Any, axes: dict[str, int], dtype: str, *, zeros: bool) -> tuple[Any, list]:
    module = runtime.load_file_module(problem.reference_path, f"bench_{problem.name}")
    if zeros:
        made = module.make_inputs(axes, getattr(torch, dtype), "meta", None)
        return module, [torch.zeros(t.shape, dtype=t.dtype) for t in made]
    request = {"axes": axes, "dtype": dtype, "seed_base": 1}
    return module, runtime.input_maker(module, request, torch.device("cpu"))(0)


def _replay(path: Path, inputs: list) -> tuple[Any, float]:
    kernel = runpy.run_path(str(path))["kernel"]
    trace, _ = record_call(lambda xs: runtime.as_output_list(kernel(*xs)), inputs)
    started = time.perf_counter()
    result = rp.replay(trace, inputs, seed=1)
    return result, time.perf_counter() - started


def sampling() -> None:
    suite = load_suite("core-v1")
    sp.VALUE_ITERATIONS = 0
    print("| kernel | shape | full ms | sampled ms | rel. diff | full wall s | sampled wall s |")
    print("|---|---|---|---|---|---|---|")
    for name, axes in SAMPLING_SHAPES.items():
        problem = suite.problem(name)
        for path in sorted((SOLUTIONS / "npu_sim").glob(f"{name}__*.py")):
            _, inputs = _inputs(problem, axes, "float32", zeros=False)
            sp.FULL_PROGRAMS, sp.LOOP_FULL = 1 << 30, 1 << 30
            full, full_wall = _replay(path, inputs)
            sp.FULL_PROGRAMS, sp.LOOP_FULL = 32, 8
            sampled, sampled_wall = _replay(path, inputs)
            a, b = full.report.time_ms, sampled.report.time_ms
            shape = "x".join(str(v) for v in axes.values())
            print(
                f"| {path.stem} | {shape} | {a:.6g} | {b:.6g} | {abs(b - a) / a:.2e} "
                f"| {full_wall:.2f} | {sampled_wall:.2f} |"
            )


def real(problems: list[str] | None) -> None:
    suite = load_suite("core-v1")
    sp.VALUE_ITERATIONS = 0
    paths = sorted((SOLUTIONS / "correct").glob("*.py")) + sorted(
        (SOLUTIONS / "npu_sim").glob("*.py")
    )
    print("| problem | workload | code | simulated ms | sampled | replay wall s |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for name in sorted({p.stem.split("__")[0] for p in paths}):
        if problems and name not in problems:
            continue
        problem = suite.problem(name)
        mine = [
            p for p in paths if p.stem.startswith(f"{name}__") and "triton.jit" in p.read_text()
        ]
        if not mine:
            continue
        for w in problem.workloads:
            if w.small:
                continue
            module, inputs = _inputs(problem, w.axes, w.dtype, zeros=True)
            started = time.perf_counter()
            ref = reference_cost(module, [t.to("meta") for t in inputs])[1]
            wall = time.perf_counter() - started
            print(f"| {name} | {w.id} | reference | {ref['time_ms']:.6g} | no | {wall:.2f} |")
            for path in mine:
                code = f"{path.parent.name}/{path.stem.split('__')[1]}"
                try:
                    result, wall = _replay(path, inputs)
                except Exception as exc:
                    print(f"| {name} | {w.id} | {code} | failed: {type(exc).__name__} | | |")
                    continue
                worst = max(worst, wall)
                print(
                    f"| {name} | {w.id} | {code} | {result.report.time_ms:.6g} "
                    f"| {'yes' if result.sampled else 'no'} | {wall:.2f} |"
                )
            sys.stdout.flush()
    print(f"\nworst replay wall: {worst:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["sampling", "real"])
    parser.add_argument("--problems", default="", help="comma-separated problem names (real)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(
        f"# {platform.machine()} {platform.system()}, Python {platform.python_version()}, "
        f"torch {torch.__version__}, one thread\n"
    )
    if args.what == "sampling":
        sampling()
    else:
        real([p for p in args.problems.split(",") if p] or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
