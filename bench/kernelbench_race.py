"""Cold evaluation side by side: KernelBench's own evaluator against `farm eval`, on the same
problem and the same honest candidate (the problem's Model renamed ModelNew), each in a fresh
process, one problem after the other, at KernelBench's default sizes.

- KernelBench: src/kernelbench/eval.py `eval_kernel_against_ref` with 5 correctness trials and
  100 timed trials (`measure_performance=True`, cuda events), run from KernelBench's own files;
  the modules its utils import for prompting (openai, litellm, dotenv, tqdm) and eval.py's
  requests / pydantic are stubbed where the node lacks them: evaluation uses none of them.
- farm: `python -m farm eval CANDIDATE --problem P --suite race-kb --device cuda --workload
  source --no-baselines --sandbox process --json R` on `farm suite import kernelbench` of the
  same files; the document's phases (sandbox start, load, correctness, timing) are reported.

Usage:
  python3 bench/kernelbench_race.py prepare [--kernelbench /tmp/kb]
      copies the problems and KernelBench's src/kernelbench into var/race/ and imports the
      problems into suite race-kb under var/race/home (run where KernelBench was fetched:
      `git --git-dir=KB.git archive HEAD | tar -x -C /tmp/kb`)
  PYTHONPATH=. python3 bench/kernelbench_race.py run --out FILE [--problems a,b] [--device cuda]
      the race on a GPU node; prints a table (walls, ratio, phases) last and writes FILE
  PYTHONPATH=. python3 bench/kernelbench_race.py run --device cpu --tiny --out FILE
      a smoke test without a GPU: the farm side on the problems' small workloads, KernelBench's
      evaluator imported (stubs checked) but not run (it needs CUDA)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RACE = ROOT / "var" / "race"
SUITE = "race-kb"
PROBLEMS = [
    "level1/1_Square_matrix_multiplication_.py",
    "level1/19_ReLU.py",
    "level1/23_Softmax.py",
    "level1/40_LayerNorm.py",
    "level1/88_MinGPTNewGelu.py",
    "level2/12_Gemm_Multiply_LeakyReLU.py",
    "level2/40_Matmul_Scaling_ResidualAdd.py",
    "level2/66_Matmul_Dropout_Softmax.py",
    "level2/76_Gemm_Add_ReLU.py",
]
TINY = ["level1/19_ReLU.py", "level1/23_Softmax.py"]
KB_CORRECT_TRIALS, KB_PERF_TRIALS = 5, 100
PER_SIDE_TIMEOUT_S = 400


def prepare(kernelbench: Path) -> None:
    src = kernelbench / "src" / "kernelbench"
    if not src.is_dir():
        sys.exit(f"{src}: missing; pass the folder KernelBench's archive was unpacked into")
    shutil.rmtree(RACE, ignore_errors=True)
    for rel in PROBLEMS:
        dest = RACE / "kernelbench" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kernelbench / "KernelBench" / rel, dest)
    shutil.copytree(src, RACE / "kb_src" / "kernelbench", ignore=shutil.ignore_patterns("*.pyc"))
    env = {**os.environ, "FARM_HOME": str(RACE / "home"), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "farm", "suite", "import", "kernelbench"]
    subprocess.run(
        [*command, str(RACE / "kernelbench"), "--name", SUITE, "--force"], check=True, env=env
    )
    print(f"prepared {len(PROBLEMS)} problems under {RACE}")


def problem_name(rel: str) -> str:
    """The farm's name of an imported KernelBench file (level1/19_ReLU.py -> level1-19_ReLU)."""
    return rel.removesuffix(".py").replace("/", "-")


def candidate(rel: str) -> Path:
    """The honest candidate: the problem's own file with Model renamed ModelNew."""
    path = RACE / "candidates" / Path(rel).name
    path.parent.mkdir(parents=True, exist_ok=True)
    source = (RACE / "kernelbench" / rel).read_text()
    path.write_text(re.sub(r"\bModel\b", "ModelNew", source))
    return path


def run(out: Path, device: str, names: list[str], tiny: bool) -> None:
    rows = []
    for rel in names:
        row: dict[str, Any] = {"problem": rel}
        row["kernelbench"] = _timed([sys.executable, __file__, "kb-one", rel, "--device", device])
        row["farm"] = _farm(rel, device, tiny)
        rows.append(row)
        print(json.dumps(row), flush=True)
    out.write_text(json.dumps({"device": device, "tiny": tiny, "rows": rows}, indent=1))
    table(rows)


def _farm(rel: str, device: str, tiny: bool) -> dict[str, Any]:
    result = RACE / "results" / f"{problem_name(rel)}.json"
    result.parent.mkdir(parents=True, exist_ok=True)
    result.unlink(missing_ok=True)
    command = [sys.executable, "-m", "farm", "eval", str(candidate(rel))]
    command += ["--problem", problem_name(rel), "--suite", SUITE, "--device", device]
    command += ["--workload", "small" if tiny else "source", "--no-baselines"]
    command += ["--sandbox", "process", "--json", str(result)]
    side = _timed(command)
    if result.is_file():  # it ran: its exit code is the verdict's (farm.result.exit_code)
        side.pop("error", None)
        doc = json.loads(result.read_text())
        w = (doc["workloads"] or [{}])[0]
        side.update(
            verdict=doc["verdict"],
            time_ms=w.get("time_ms"),
            phases_s=doc["timing"].get("phases_s", {}),
            transport=doc["environment"].get("output_transport"),
        )
    return side


def _timed(command: list[str]) -> dict[str, Any]:
    env = {
        **os.environ,
        "FARM_HOME": str(RACE / "home"),
        "FARM_ALLOW_UNSANDBOXED": "1",
        "PYTHONPATH": str(ROOT),
    }
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=PER_SIDE_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return {"wall_s": None, "error": f"no result in {PER_SIDE_TIMEOUT_S} s"}
    wall = time.perf_counter() - started
    side: dict[str, Any] = {"wall_s": round(wall, 2), "rc": proc.returncode}
    marked = [line for line in proc.stdout.splitlines() if line.startswith("KB-RESULT ")]
    if marked:
        side.update(json.loads(marked[-1].removeprefix("KB-RESULT ")))
    if proc.returncode:
        side["error"] = (proc.stderr or proc.stdout)[-600:]
    return side


# --- KernelBench's side, in its own fresh process -------------------------------------------


def kb_one(rel: str, device: str) -> None:
    """Evaluate one problem with KernelBench's evaluator; print `KB-RESULT {json}`."""
    _stub_missing_modules()
    sys.path.insert(0, str(RACE / "kb_src"))
    from kernelbench.eval import eval_kernel_against_ref  # type: ignore[import-not-found]

    if device != "cuda":
        print("KB-RESULT " + json.dumps({"verdict": "not run (KernelBench needs CUDA)"}))
        return
    reference = (RACE / "kernelbench" / rel).read_text()
    result = eval_kernel_against_ref(
        reference,
        candidate(rel).read_text(),
        num_correct_trials=KB_CORRECT_TRIALS,
        num_perf_trials=KB_PERF_TRIALS,
        measure_performance=True,
        timing_method="cuda_event",
        device=0,
        backend="cuda",
    )
    verdict = "no result" if result is None else ("PASSED" if result.correctness else "FAILED")
    # KernelBench's KernelExecResult comments `runtime` as us, but it is the mean of
    # timing.get_timing_stats, whose times are cuda-event milliseconds
    runtime = None if result is None else result.runtime
    print("KB-RESULT " + json.dumps({"verdict": verdict, "time_ms": runtime}))


def _stub_missing_modules() -> None:
    """Stand-ins for modules KernelBench imports but evaluation never calls."""
    import types

    def module(name: str, **attrs: Any) -> None:
        try:
            __import__(name)
        except ImportError:
            stub = types.ModuleType(name)
            stub.__dict__.update(attrs)
            sys.modules[name] = stub

    module("openai", OpenAI=object)
    module("litellm", completion=None)
    module("dotenv", load_dotenv=lambda *a, **k: None)
    module("tqdm", tqdm=lambda it=None, *a, **k: it)
    module("requests")
    module("pydantic", BaseModel=_Record)


class _Record:
    """pydantic.BaseModel as KernelExecResult uses it: annotated fields with defaults."""

    def __init__(self, **values: Any) -> None:
        import copy

        for klass in reversed(type(self).__mro__):
            for name in getattr(klass, "__annotations__", {}):
                if hasattr(klass, name):
                    setattr(self, name, copy.copy(getattr(klass, name)))
        self.__dict__.update(values)


def table(rows: list[dict[str, Any]]) -> None:
    print("\n| problem | KernelBench wall s | farm wall s | farm / KB | KB | farm | farm phases |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        kb, farm = r["kernelbench"], r["farm"]
        ratio = (
            f"{farm['wall_s'] / kb['wall_s']:.2f}x"
            if kb.get("wall_s") and farm.get("wall_s") and kb.get("time_ms")
            else "-"
        )
        phases = " ".join(f"{k}={v:.1f}" for k, v in (farm.get("phases_s") or {}).items())
        print(
            f"| {r['problem']} | {kb.get('wall_s')} | {farm.get('wall_s')} | {ratio} "
            f"| {_side(kb)} | {_side(farm)} | {phases} |"
        )


def _side(side: dict[str, Any]) -> str:
    if side.get("error") and not side.get("verdict"):
        return "error: " + side["error"].strip().splitlines()[-1][:80]
    t = side.get("time_ms")
    return f"{side.get('verdict')} {t:.3f} ms" if t else str(side.get("verdict"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare")
    prep.add_argument("--kernelbench", type=Path, default=Path("/tmp/kb"))
    go = sub.add_parser("run")
    go.add_argument("--out", type=Path, required=True)
    go.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    go.add_argument("--problems", help="comma-separated files, e.g. level1/19_ReLU.py")
    go.add_argument("--tiny", action="store_true", help="the farm on small workloads")
    one = sub.add_parser("kb-one")
    one.add_argument("problem")
    one.add_argument("--device", default="cuda")
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.kernelbench)
    elif args.command == "kb-one":
        kb_one(args.problem, args.device)
    else:
        names = args.problems.split(",") if args.problems else (TINY if args.tiny else PROBLEMS)
        run(args.out, args.device, names, args.tiny)


if __name__ == "__main__":
    main()
