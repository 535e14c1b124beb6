"""Calibrate the per-dtype tolerances of core-v1 from honest in-dtype implementations.

For each problem and output dtype, several honest implementations (the reference as the farm
computes it: fp32 arithmetic rounded once; the same chain of ops run entirely in the dtype, the
way an unfused eager kernel is written; split-K / exp2 variants) and the low-precision cheats
(inputs through fp16 or fp8, outputs rounded through fp8) run on inputs from the problem's own
`make_inputs` at real model widths (rows cut down so it runs in seconds). Each is measured
against an fp64 evaluation of the formula and against the farm's check reference, as

    needed rtol = max over elements of (|out - ref| - atol) / |ref|   (0 when within atol)

i.e. the smallest rtol at which the farm's rule |out - ref| <= atol + rtol * |ref| passes it.
Row-sum invariants (softmax) are measured as max |row sum - 1| in fp64.

Normwise error is ||out - ref||_2 / ||ref||_2. The calibrated tolerance is the next step of
1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k above 2x the worst honest figure (and at least 2 ulp
per element, 1 ulp normwise). The script compares both with
the tolerance configured in problem.yaml and fails (exit 1) when an honest implementation fails
it or a cheat passes it, so the table it prints is also the proof that the margin
exists on this device. Run:

    PYTHONPATH=. python3 bench/calibrate_tolerances.py [--device cuda] [--json out.json]

Uses only torch + stdlib (runs on a GPU node without the farm's dependencies).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import torch

SUITE = Path(__file__).resolve().parent.parent / "farm" / "suite" / "suites" / "core-v1"
HEADROOM = 2.0
SEEDS = (0, 1, 2)

# Calibration shapes: the real widths of each problem's model workloads (the reduction axis
# decides the error), with the number of rows cut so that fp64 on a CPU stays fast.
SHAPES: dict[str, list[dict[str, int]]] = {
    "softmax": [
        {"M": 16, "N": 128256},
        {"M": 64, "N": 8192},
        {"M": 512, "N": 197},
        {"M": 64, "N": 256},  # the small workloads
    ],
    "rmsnorm": [{"M": 16, "N": 4096}, {"M": 16, "N": 8192}, {"M": 64, "N": 256}],
    "matmul": [{"M": 64, "N": 256, "K": 4096}, {"M": 64, "N": 256, "K": 14336}],
    "vector_add": [{"N": 1 << 20}],
}
DTYPES = {
    "softmax": ("float32", "bfloat16"),
    "rmsnorm": ("float32", "bfloat16"),
    "matmul": ("float32", "bfloat16"),
    "vector_add": ("float32", "bfloat16", "float16"),
}
# The absolute floor of each dtype's rule (values this close to zero are not compared
# relatively); tolerances in problem.yaml keep these.
ATOL = {
    "softmax": {"float32": 1e-7, "bfloat16": 1e-5},
    "rmsnorm": {"float32": 1e-5, "bfloat16": 1e-2},
    "matmul": {"float32": 1e-4, "bfloat16": 1e-2},
    "vector_add": {"float32": 1e-6, "bfloat16": 1e-2, "float16": 1e-3},
}

Impl = Callable[..., torch.Tensor]


# -- fp64 truths --------------------------------------------------------------------------------


def truth(problem: str, *xs: torch.Tensor) -> torch.Tensor:
    d = [x.double() for x in xs]
    if problem == "softmax":
        return torch.softmax(d[0], dim=-1)
    if problem == "rmsnorm":
        x, w = d
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    if problem == "matmul":
        return d[0] @ d[1]
    return d[0] + d[1]


# -- honest in-dtype implementations ------------------------------------------------------------


def softmax_chain(x: torch.Tensor) -> torch.Tensor:
    """max, subtract, exp, sum, divide: every op in x's dtype (the unfused eager kernel)."""
    e = (x - x.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


def softmax_exp2_chain(x: torch.Tensor) -> torch.Tensor:
    """The exp2 form Triton kernels use, in x's dtype."""
    e = torch.exp2((x - x.amax(-1, keepdim=True)) * 1.4426950408889634)
    return e * (1.0 / e.sum(-1, keepdim=True))


def rmsnorm_chain(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def matmul_split_k(a: torch.Tensor, b: torch.Tensor, chunk: int = 512) -> torch.Tensor:
    """Split-K: each K slice's product rounded to the dtype, the slices summed in an fp32
    workspace (cuBLAS and Triton split-K keep fp32 partials), rounded once at the end."""
    out = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float32, device=a.device)
    for k in range(0, a.shape[1], chunk):
        out += (a[:, k : k + chunk] @ b[k : k + chunk]).float()
    return out.to(a.dtype)


HONEST: dict[str, dict[str, Impl]] = {
    "softmax": {"chain in dtype": softmax_chain, "exp2 chain in dtype": softmax_exp2_chain},
    "rmsnorm": {"chain in dtype": rmsnorm_chain},
    "matmul": {"matmul in dtype": torch.matmul, "split-K in dtype": matmul_split_k},
    "vector_add": {"add in dtype": torch.add},
}


# -- cheats: lower precision than the dtype asks for --------------------------------------------


def through(low: torch.dtype, ref: Impl) -> Impl:
    """Inputs rounded to `low`, computed, returned in the asked dtype (an upcast cheat)."""

    def cheat(*xs: torch.Tensor) -> torch.Tensor:
        return ref(*[x.to(low).to(x.dtype) for x in xs])

    return cheat


def output_through(low: torch.dtype, ref: Impl) -> Impl:
    def cheat(*xs: torch.Tensor) -> torch.Tensor:
        out = ref(*xs)
        return out.to(low).to(out.dtype)

    return cheat


def output_through_scaled(low: torch.dtype, ref: Impl) -> Impl:
    """Output quantised to `low` with a per-row scale that uses its whole range (no underflow):
    the best a cheat storing low-precision results can do."""

    def cheat(*xs: torch.Tensor) -> torch.Tensor:
        out = ref(*xs).float()
        scale = out.abs().amax(-1, keepdim=True).clamp_min(1e-30) / torch.finfo(low).max
        return ((out / scale).to(low).float() * scale).to(xs[0].dtype)

    return cheat


def cheats(ref: Impl, dtype: str) -> dict[str, Impl]:
    found = {
        "inputs through float8_e4m3": through(torch.float8_e4m3fn, ref),
        "inputs through float8_e5m2": through(torch.float8_e5m2, ref),
        "output through float8_e4m3": output_through(torch.float8_e4m3fn, ref),
        "output through scaled float8_e4m3": output_through_scaled(torch.float8_e4m3fn, ref),
    }
    if dtype == "float32":
        found["inputs through float16"] = through(torch.float16, ref)
        found["inputs through bfloat16"] = through(torch.bfloat16, ref)
        found["output through float16"] = output_through(torch.float16, ref)
    return found


# -- measurement --------------------------------------------------------------------------------


def needed_rtol(out: torch.Tensor, ref: torch.Tensor, atol: float) -> float:
    o, r = out.double(), ref.double()
    excess = ((o - r).abs() - atol).clamp_min(0)
    return float((excess / r.abs().clamp_min(1e-300)).max())


def norm_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """Normwise relative error ||out - ref||_2 / ||ref||_2. An honest in-dtype chain errs by
    several ulp only on small elements (softmax: where x - max is large and its bf16 rounding
    coarse), which weigh little in the norm; a lower-precision format errs on every element,
    the large ones included."""
    o, r = out.double(), ref.double()
    return float(torch.linalg.vector_norm(o - r) / torch.linalg.vector_norm(r).clamp_min(1e-300))


def row_sum_error(out: torch.Tensor) -> float:
    return float((out.double().sum(-1) - 1).abs().max())


def load_reference(problem: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"ref_{problem}", SUITE / problem / "reference.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(problem: str, dtype_name: str, device: torch.device) -> dict[str, dict[str, float]]:
    """impl -> {rtol_vs_check, rtol_vs_fp64, norm_vs_check, row_sum}: over shapes and seeds, the
    largest for honest implementations and the smallest for cheats."""
    module = load_reference(problem)
    dtype = getattr(torch, dtype_name)
    atol = ATOL[problem][dtype_name]
    impls = {"reference (fp32, rounded once)": module.reference, **HONEST[problem]}
    cheat_names = set(cheats(module.reference, dtype_name))
    impls |= cheats(module.reference, dtype_name)
    worst: dict[str, dict[str, float]] = {}
    for axes in SHAPES[problem]:
        for seed in SEEDS:
            gen = torch.Generator(device=device).manual_seed(seed)
            xs = module.make_inputs(axes, dtype, device, gen)
            check, exact = module.reference(*xs), truth(problem, *xs)
            for name, impl in impls.items():
                out = impl(*xs)
                row = {
                    "rtol_vs_check": needed_rtol(out, check, atol),
                    "rtol_vs_fp64": needed_rtol(out, exact, atol),
                    "norm_vs_check": norm_error(out, check),
                }
                if problem == "softmax":
                    row["row_sum"] = row_sum_error(out)
                # honest: the worst case; cheats: the closest they come to passing
                pick = min if name in cheat_names else max
                into = worst.setdefault(name, dict(row))
                for key, value in row.items():
                    into[key] = pick(into[key], value)
    return worst


def step_up(value: float) -> float:
    """The next step of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 (x 10^k) at or above `value`."""
    if value <= 0:
        return 0.0
    exp = math.floor(math.log10(value))
    for mantissa in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if mantissa * 10**exp >= value * (1 - 1e-12):
            return float(mantissa * 10**exp)
    return float(10 ** (exp + 1))


def floor_rtol(dtype: torch.dtype, ulps: float = 2) -> float:
    """`ulps` ulp of the dtype: per element, the candidate's and the reference's roundings may
    each be half an ulp off the exact value and a differently ordered sum adds one more (2);
    normwise, the two roundings alone (1)."""
    return step_up(ulps * torch.finfo(dtype).eps)


def configured(problem: str) -> dict[str, dict[str, float]]:
    """The tolerance block of problem.yaml (read without a YAML library: one flow mapping per
    dtype line, as the suite writes them)."""
    text = (SUITE / problem / "problem.yaml").read_text()
    block = text.split("\ntolerance:\n", 1)[1]
    found: dict[str, dict[str, float]] = {}
    for line in block.splitlines():
        if line and not line.startswith(" "):
            break
        m = re.match(r"\s+(\w+): \{(.*)\}\s*$", line)
        if m:
            found[m.group(1)] = {
                k.strip(): float(v) for k, v in (kv.split(":") for kv in m.group(2).split(","))
            }
    return found


def calibrate(problem: str, dtype_name: str, device: torch.device) -> dict[str, object]:
    rows = measure(problem, dtype_name, device)
    honest = {k: v for k, v in rows.items() if not k.startswith(("inputs ", "output "))}
    cheat = {k: v for k, v in rows.items() if k not in honest}
    dtype = getattr(torch, dtype_name)
    needed = {
        "rtol": max(
            floor_rtol(dtype), step_up(HEADROOM * max(v["rtol_vs_check"] for v in honest.values()))
        ),
        "norm_rtol": max(
            floor_rtol(dtype, 1),
            step_up(HEADROOM * max(v["norm_vs_check"] for v in honest.values())),
        ),
    }
    if problem == "softmax":
        needed["row_sum"] = step_up(HEADROOM * max(v["row_sum"] for v in honest.values()))
    tol = configured(problem)[dtype_name]
    passes = {
        k: v["rtol_vs_check"] <= tol["rtol"] and v["norm_vs_check"] <= tol.get("norm_rtol", 1e300)
        for k, v in rows.items()
    }
    return {
        "problem": problem,
        "dtype": dtype_name,
        "atol": ATOL[problem][dtype_name],
        "needed": needed,
        "configured": tol,
        "rows": rows,
        "honest_fail": [k for k in honest if not passes[k]],
        "cheat_pass": [k for k in cheat if passes[k]],
        "kind": {k: "honest" if k in honest else "cheat" for k in rows},
        "passes": passes,
    }


def print_table(results: list[dict]) -> None:
    print(
        "| problem | dtype | implementation | kind | rtol needed | vs fp64 | norm err | row sum "
        "| at the configured tolerance |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        for name, v in r["rows"].items():
            ok = r["passes"][name]
            kind = r["kind"][name]
            verdict = (
                ("passes" if ok else "FAILS (bad)")
                if kind == "honest"
                else ("caught" if not ok else "PASSES (bad)")
            )
            rs = f"{v['row_sum']:.1e}" if "row_sum" in v else ""
            print(
                f"| {r['problem']} | {r['dtype']} | {name} | {kind} | {v['rtol_vs_check']:.1e} | "
                f"{v['rtol_vs_fp64']:.1e} | {v['norm_vs_check']:.1e} | {rs} | {verdict} |"
            )
        need = ", ".join(f"{k} {v:g}" for k, v in r["needed"].items())
        conf = ", ".join(f"{k} {v:g}" for k, v in r["configured"].items())
        print(
            f"| {r['problem']} | {r['dtype']} | calibrated: {need} | configured: {conf} | | | | | |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", help="write the measurements here")
    parser.add_argument("--problem", action="append", help="only these problems")
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    problems = args.problem or list(SHAPES)
    results = [calibrate(p, d, device) for p in problems for d in DTYPES[p]]
    print(
        f"device: {torch.cuda.get_device_name() if device.type == 'cuda' else 'cpu'}, "
        f"torch {torch.__version__}"
    )
    print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    bad = [
        f"{r['problem']}/{r['dtype']}: honest {k} fails" for r in results for k in r["honest_fail"]
    ]
    bad += [
        f"{r['problem']}/{r['dtype']}: cheat {k} passes" for r in results for k in r["cheat_pass"]
    ]
    for line in bad:
        print(line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
