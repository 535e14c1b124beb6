"""What every importer shares: problem drafts, the npu-sim scaling rule, writing and pinning.

The npu-sim rule: a workload is `small` when its inputs hold at most SMALL_ELEMENTS elements in
all. When a source has no such workload, one is added: a copy of the first workload whose
largest scalable axis is halved (rounding up) until the inputs fit, and which must still run
through the reference.
"""

from __future__ import annotations

import math
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from farm.errors import SuiteError

SMALL_ELEMENTS = 64 * 1024
DEFAULT_TOLERANCE = {
    "float64": {"atol": 1e-8, "rtol": 1e-8},
    "float32": {"atol": 1e-4, "rtol": 1e-4},
    "float16": {"atol": 1e-2, "rtol": 1e-2},
    "bfloat16": {"atol": 1e-2, "rtol": 1e-2},
}
_CATEGORY_WORDS = [
    ("attention", ("attention", "attn", "sdpa")),
    ("convolution", ("conv",)),
    ("gemm", ("matmul", "gemm", "linear", "bmm", "mm_", "matrix", "dense", "einsum")),
    ("softmax", ("softmax",)),
    ("normalization", ("norm",)),
    ("pooling", ("pool",)),
    ("loss", ("loss", "entropy", "hinge", "kldiv", "mse", "triplet")),
    ("scan", ("cumsum", "cumprod", "scan")),
    ("topk", ("topk", "argmax", "argmin", "sort")),
    ("embedding", ("embedding",)),
    ("quantization", ("quant",)),
    (
        "activation",
        ("relu", "gelu", "sigmoid", "tanh", "swish", "silu", "elu", "softplus", "mish", "hardt"),
    ),
    ("reduction", ("sum", "mean", "max", "min", "prod", "reduce", "reduction")),
]
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.\-]+")


@dataclass
class WorkloadDraft:
    id: str
    axes: dict[str, int]
    small: bool = False
    source: str | None = None


@dataclass
class ProblemDraft:
    """Everything problem.yaml needs, plus the files to write beside it."""

    name: str
    category: str
    description: str
    signature: str
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    dtype: str
    workloads: list[WorkloadDraft]
    flops: str
    compute_unit: str
    reference: str
    files: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def yaml_text(self) -> str:
        used = [self.dtype] + [t["dtype"] for t in (*self.inputs, *self.outputs) if "dtype" in t]
        tolerance = {d: DEFAULT_TOLERANCE[d] for d in dict.fromkeys(used) if d in DEFAULT_TOLERANCE}
        if self.dtype.startswith("float8") or any(d.startswith("float8") for d in used):
            tolerance |= {d: {"atol": 0.125, "rtol": 0.125} for d in used if d.startswith("float8")}
        data = {
            "name": self.name,
            "category": self.category,
            "description": self.description,
            "signature": self.signature,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "dtypes": [self.dtype],
            "pass": "forward",
            "languages": ["pytorch", "triton", "cuda", "hip"],
            "tolerance": tolerance,
            "flops": {"expr": self.flops, "unit": self.compute_unit},
            "bytes": "io",
            "workloads": [_workload_yaml(w, self.dtype) for w in self.workloads],
            "extra": self.extra,
        }
        return yaml.safe_dump(data, sort_keys=False, width=100)


def _workload_yaml(w: WorkloadDraft, dtype: str) -> dict[str, Any]:
    out: dict[str, Any] = {"id": w.id, "axes": dict(w.axes), "dtype": dtype}
    if w.source:
        out["source"] = w.source
    if w.small:
        out["small"] = True
    return out


def problem_name(path: Path, root: Path) -> str:
    """File (or folder) stem, prefixed by the folders between `root` and it: `level1-23_Softmax`."""
    rel = path.relative_to(root)
    parts = [*rel.parent.parts, rel.stem]
    return _NAME_CHARS.sub("_", "-".join(p for p in parts if p not in ("", ".")))


def guess_category(name: str, *, default: str = "fused") -> str:
    lowered = name.lower()
    for category, words in _CATEGORY_WORDS:
        if any(w in lowered for w in words):
            return category
    return default


def compute_unit(category: str) -> str:
    return "tensor" if category in ("gemm", "convolution", "attention") else "vector"


def elements(shapes: Iterable[tuple[int, ...]]) -> int:
    return sum(math.prod(s) for s in shapes)


def scale_down(
    axes: dict[str, int],
    scalable: Iterable[str],
    count: Callable[[dict[str, int]], int],
    limit: int = SMALL_ELEMENTS,
) -> dict[str, int] | None:
    """Halve (rounding up) the largest scalable axis until count(axes) <= limit; None when the
    scalable axes reach 1 first."""
    current = dict(axes)
    names = [n for n in scalable if n in current]
    while count(current) > limit:
        big = max(names, key=lambda n: current[n], default=None)
        if big is None or current[big] <= 1:
            return None
        current[big] = (current[big] + 1) // 2
    return current


def flops_formula(
    counts: Callable[[dict[str, int]], int], axes: dict[str, int], names: list[str]
) -> tuple[str, str | None]:
    """A FLOP formula from torch.utils.flop_counter counts: `c*A*B^2...` when the count is a
    monomial in the axes (checked by doubling each axis and at the halved point), else the
    count as a constant when no axis changes it; else "0". Returns (formula, note or None)."""
    base = counts(axes)
    if base <= 0:
        return (
            "0",
            "torch.utils.flop_counter does not count this op: FLOPs are 0 (memory-bound SOL)",
        )
    exponents: dict[str, int] = {}
    for name in names:
        ratio = counts({**axes, name: axes[name] * 2}) / base
        power = round(math.log2(ratio)) if ratio > 0 else -1
        if power < 0 or 2**power != ratio:
            return "0", f"FLOPs are not a monomial in {name}; FLOPs set to 0 (memory-bound SOL)"
        if power:
            exponents[name] = power
    denominator = math.prod(axes[n] ** p for n, p in exponents.items())
    if base % denominator:
        return "0", "FLOP count has no integer monomial form; FLOPs set to 0"
    coeff = base // denominator
    terms = [str(coeff)] + [n if p == 1 else f"{n}**{p}" for n, p in exponents.items()]
    formula = "*".join(t for t in terms if t != "1") or "1"
    check = {**axes, **{n: max(1, (axes[n] + 1) // 2) for n in names}}
    expected = coeff * math.prod(check[n] ** p for n, p in exponents.items())
    if counts(check) != expected:
        return "0", "FLOP count is not a monomial in the axes; FLOPs set to 0"
    return formula, None


def write_suite(
    name: str, drafts: list[ProblemDraft], dest: Path, *, force: bool
) -> tuple[str, list[str]]:
    """Write every draft under dest/<name>/, pin it and check it loads; return the suite hash
    and a message per problem left out because it did not load.

    The suite is built in a temporary directory and moved in place only when it loads, so a
    failed import never leaves a half-written suite. An existing suite needs `force`.
    """
    from farm.suite import loader, manifest

    if not drafts:
        raise SuiteError(f"nothing to import into suite {name}", hint="check the directory")
    target = dest / name
    if target.exists() and not force:
        raise SuiteError(
            f"suite {name} already exists at {target}",
            hint="pass --force to replace it, or --name to import under another name",
        )
    dest.mkdir(parents=True, exist_ok=True)
    tmp_root = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=dest))
    staging = tmp_root / name
    skipped = []
    try:
        for draft in drafts:
            problem_dir = staging / draft.name
            _write_problem(problem_dir, draft)
            try:
                loader.load_problem(problem_dir, label=f"{name}/")
            except SuiteError as exc:
                skipped.append(f"{draft.name}: {exc.message}")
                shutil.rmtree(problem_dir)
        if len(skipped) == len(drafts):
            raise SuiteError(f"no problem of suite {name} loads: {skipped[0]}")
        suite_hash = manifest.write(staging)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    loader._load_suite_cached.cache_clear()
    return suite_hash, skipped


def _write_problem(problem_dir: Path, draft: ProblemDraft) -> None:
    problem_dir.mkdir(parents=True)
    (problem_dir / "problem.yaml").write_text(draft.yaml_text())
    (problem_dir / "reference.py").write_text(draft.reference)
    for rel, text in draft.files.items():
        (problem_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (problem_dir / rel).write_text(text)


def axis_name(raw: str, taken: set[str]) -> str:
    """A formula-safe axis name from `raw`, distinct from `taken`."""
    base = re.sub(r"\W", "_", raw) or "A"
    if base[0].isdigit():
        base = "A" + base
    name, i = base, 2
    while name in taken or name in ("E", "min", "max", "ceil", "floor", "log2"):
        name, i = f"{base}_{i}", i + 1
    return name


# What converting one source problem may raise: that problem is skipped and named, not fatal.
CONVERSION_ERRORS = (SuiteError, ValueError, RuntimeError, TypeError, KeyError)


def draft_all(
    paths: Iterable[Path],
    root: Path,
    draft: Callable[[Path, Path], ProblemDraft],
    *,
    empty: SuiteError,
) -> tuple[list[ProblemDraft], list[str]]:
    """Convert every source problem; one that cannot be converted is named, not fatal.

    Raises `empty` when `root` held nothing to convert at all.
    """
    drafts, skipped = [], []
    for path in paths:
        try:
            drafts.append(draft(path, root))
        except CONVERSION_ERRORS as exc:
            skipped.append(f"{path.relative_to(root)}: {exc}")
    if not drafts and not skipped:
        raise empty
    return drafts, skipped
