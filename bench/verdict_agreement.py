"""Verdict agreement: the source suite's own checker against the farm, candidate by candidate.

For a sample of KernelBench problems (BatchNorm and Dropout ones included), GPU MODE problems and
the flashinfer-trace example (tests/fixtures/flashinfer), an honest candidate and wrong ones are
judged twice: by the source's own rule, run here from the source's own files, and by the farm
(`farm suite import`, then the whole supervisor in test mode). The table of both verdicts goes to
docs/formats.md. The sources' rules, as their code states them:
- KernelBench (src/kernelbench/eval.py `run_and_check_correctness`): 5 trials with seeds drawn
  after `torch.manual_seed(42)`, inputs from `get_inputs()` under each trial's seed, Model and
  ModelNew built after `set_seed(42)`, never put in eval mode, `torch.allclose(out, new,
  atol=1e-4, rtol=1e-4)` for float32, under `torch.no_grad()`.
- GPU MODE (problems/*/eval.py `_run_single_test`): for each task.yml test,
  `check_implementation(data, custom_kernel(clone(data)))` from the problem's reference.py.
- flashinfer-bench (bench/utils.py `compute_error_stats`): an element fails when its absolute
  error exceeds 1e-2 and its relative error exceeds 1e-2; inputs as `_rand_tensor` draws them.

Both judges see the same shapes: on cpu the problem's small workloads (the source's rule is run at
those axes), on cuda the source's own shapes (KernelBench's file constants, GPU MODE's tests).

Usage:
  python3 bench/verdict_agreement.py prepare --kernelbench KB/KernelBench --gpumode RK/problems
      copies the sample's source files into var/agreement/ and the suites into var/suites/
      (run where the suites were fetched)
  PYTHONPATH=. python3 bench/verdict_agreement.py run --device cpu|cuda [--out FILE.json]
      [--jobs N] [--only SUITE/PROBLEM]...
      imports the sample and judges every candidate; prints a Markdown table
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "var" / "agreement"
KERNELBENCH = [
    "level1/1_Square_matrix_multiplication_.py",
    "level1/5_Matrix_scalar_multiplication.py",
    "level1/19_ReLU.py",
    "level1/23_Softmax.py",
    "level1/33_BatchNorm.py",
    "level1/34_InstanceNorm.py",
    "level1/36_RMSNorm_.py",
    "level1/40_LayerNorm.py",
    "level1/47_Sum_reduction_over_a_dimension.py",
    "level1/89_cumsum.py",
    "level1/100_HingeLoss.py",
    "level2/11_ConvTranspose2d_BatchNorm_Tanh_MaxPool_GroupNorm.py",
    "level2/15_ConvTranspose3d_BatchNorm_Subtract.py",
    "level2/33_Gemm_Scale_BatchNorm.py",
    "level2/66_Matmul_Dropout_Softmax.py",
    "level2/83_Conv3d_GroupNorm_Min_Clamp_Dropout.py",
    "level2/12_Gemm_Multiply_LeakyReLU.py",
    "level3/1_MLP.py",
    "level3/33_VanillaRNN.py",
    "level3/19_MobileNetV1.py",
    "level3/11_VGG16.py",
]
GPUMODE = [
    "pmpp_v2/vectoradd_py",
    "pmpp_v2/prefixsum_py",
    "pmpp_v2/grayscale_py",
    "pmpp_v2/matmul_py",
    "pmpp_v2/conv2d_py",
    "pmpp_v2/sort_py",
    "pmpp_v2/histogram_py",
    "pmpp_v2/vectorsum_py",
    "linalg/cholesky_py",
    "linalg/qr_py",
    "helion/causal_conv1d_py",
]


def prepare(kernelbench: Path, gpumode: Path) -> None:
    """Copy the sample's files (verbatim) under var/agreement/{kernelbench,gpumode}/, and both
    suites whole under var/suites/ (to import them on a GPU node)."""
    for name, tree in (("kernelbench", kernelbench), ("gpumode", gpumode)):
        shutil.copytree(tree, ROOT / "var" / "suites" / name, dirs_exist_ok=True)
    for rel in KERNELBENCH:
        _copy(kernelbench / rel, SAMPLE / "kernelbench" / rel)
    for rel in GPUMODE:
        folder = gpumode / rel
        for item in folder.iterdir():
            if item.is_file():
                _copy(item, SAMPLE / "gpumode" / rel / item.name)
        utils = folder.parent / "utils.py"
        if utils.is_file():
            _copy(utils, SAMPLE / "gpumode" / Path(rel).parent / "utils.py")
    print(f"sample written to {SAMPLE}")


def _copy(src: Path, dest: Path) -> None:
    if not src.is_file():
        sys.exit(f"{src}: missing; pass the folders of the fetched suites")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


HOME = SAMPLE / "home"


def _env() -> None:
    """Every judging process (this one and the pool's) sees the sample's FARM_HOME."""
    os.environ.update(FARM_HOME=str(HOME), FARM_SANDBOX="process", FARM_ALLOW_UNSANDBOXED="1")
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # agreement_judges, beside this


def _judge(fmt: str, name: str, device: str) -> list[dict[str, Any]]:
    import agreement_judges as judges

    return judges.judge_problem(fmt, f"agree-{fmt}", name, device, HOME)


def run(device: str, out: Path | None, jobs: int, only: list[str]) -> None:
    _env()
    from farm.cli import main

    sources = {
        "kernelbench": SAMPLE / "kernelbench",
        "gpumode": SAMPLE / "gpumode",
        "flashinfer": ROOT / "tests" / "fixtures" / "flashinfer",
    }
    for fmt, folder in sources.items():
        main(["suite", "import", fmt, str(folder), "--name", f"agree-{fmt}", "--force"])
    import agreement_judges as judges

    tasks = [
        (fmt, name)
        for fmt in sources
        for name in judges.problems_of(f"agree-{fmt}")
        if not only or any(o in f"{fmt}/{name}" for o in only)
    ]
    rows: list[dict[str, Any]] = []
    # One process per problem (spawned: CUDA is not fork-safe), `jobs` at a time; each finished
    # problem's rows are printed at once, so a run cut short still shows what it judged.
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_env) as pool:
        futures = {pool.submit(_judge, fmt, name, device): (fmt, name) for fmt, name in tasks}
        for future in as_completed(futures):
            fmt, name = futures[future]
            try:
                done = future.result()
            except Exception as exc:  # a judge that crashed is a row, not a lost run
                done = [_crashed(fmt, name, exc)]
            rows += done
            for r in done:
                print(f"row: {json.dumps(r)}", file=sys.stderr, flush=True)
    # Judges that ran out of device memory beside the others are judged again, one at a time
    # (with --jobs 1 there were no others: judging again would only repeat the same run).
    again = sorted({(r["suite"], r["problem"]) for r in rows if jobs > 1 and _out_of_memory(r)})
    rows = [r for r in rows if (r["suite"], r["problem"]) not in again]
    for fmt, name in again:
        try:
            done = _judge(fmt, name, device)
        except Exception as exc:
            done = [_crashed(fmt, name, exc)]
        rows += done
    rows.sort(key=lambda r: (r["suite"], r["problem"], r["candidate"]))
    _table(rows)
    if out:
        out.write_text(json.dumps({"device": device, "when": time.time(), "rows": rows}, indent=1))


def _out_of_memory(row: dict[str, Any]) -> bool:
    return any(
        "OutOfMemory" in str(row.get(k, "")) or "out of memory" in str(row.get(k, ""))
        for k in ("source", "farm", "farm_reason")
    )


def _crashed(fmt: str, name: str, exc: BaseException) -> dict[str, Any]:
    why = f"judge crashed: {type(exc).__name__}: {exc}"[:300]
    return {
        "suite": fmt,
        "problem": name,
        "candidate": "-",
        "source": why,
        "farm": why,
        "agree": False,
    }


def _table(rows: list[dict[str, Any]]) -> None:
    print("| suite | problem | candidate | source's checker | farm | agree | farm's reason |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        mark = "yes" if r["agree"] else "**no**"
        print(
            f"| {r['suite']} | {r['problem']} | {r['candidate']} | {r['source']} "
            f"| {r['farm']} | {mark} | {r.get('farm_reason', '')[:160]} |"
        )
    agree = sum(r["agree"] for r in rows)
    print(f"\n{agree} of {len(rows)} verdicts agree")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare")
    prep.add_argument("--kernelbench", type=Path, required=True)
    prep.add_argument("--gpumode", type=Path, required=True)
    go = sub.add_parser("run")
    go.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    go.add_argument("--out", type=Path)
    go.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="problems judged at once (on one GPU, only problems whose source shapes are small: "
        "KernelBench's fill the device, and judges beside them run out of memory)",
    )
    go.add_argument(
        "--only", action="append", default=[], help="judge only SUITE/PROBLEM names containing this"
    )
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.kernelbench, args.gpumode)
    else:
        run(args.device, args.out, args.jobs, args.only)


if __name__ == "__main__":
    main()
