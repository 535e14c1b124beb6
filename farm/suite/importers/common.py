"""What every importer shares: problem drafts, the npu-sim scaling rule, writing and pinning.

The npu-sim rule: a workload is `small` when its inputs hold at most SMALL_ELEMENTS elements in
all and the module's weights plus the largest tensor of its forward hold at most SMALL_FOOTPRINT
(a "small" MLP must not keep gigabytes of weights). When a source has no such workload, one is
added: a copy of the first workload whose largest scalable axis is halved (rounding up) until it
fits, and which must still run through the reference. When none can be made, the problem says
why in `extra.not_small`, and CPU and npu-sim answer "not runnable on this device".
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from farm.errors import SuiteError
from farm.suite.model import LOW_PRECISION_FLOATS

if TYPE_CHECKING:
    from farm.suite.importers.isolation import Limits

SMALL_ELEMENTS = 64 * 1024
SMALL_FOOTPRINT = 4 * 1024 * 1024  # elements: 16 MiB of float32 weights + largest activation
DEFAULT_TOLERANCE = {
    "float64": {"atol": 1e-8, "rtol": 1e-8},
    "float32": {"atol": 1e-4, "rtol": 1e-4},
    "float16": {"atol": 1e-2, "rtol": 1e-2},
    "bfloat16": {"atol": 1e-2, "rtol": 1e-2},
}
# fp8 outputs: one step of e4m3's 3-bit mantissa; packed fp4 cannot be widened on every device,
# so fp4 outputs are compared bit for bit
LOW_PRECISION_TOLERANCE = {
    d: {"atol": 0.0, "rtol": 0.0} if d == "float4_e2m1fn_x2" else {"atol": 0.125, "rtol": 0.125}
    for d in LOW_PRECISION_FLOATS
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
    scaled_from: str | None = None  # the workload this is a copy of, scaled down to fit


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
    tolerance: dict[str, dict[str, float]] = field(default_factory=lambda: DEFAULT_TOLERANCE)
    requires: list[str] = field(default_factory=list)  # hardware features (problem.yaml)

    def yaml_text(self) -> str:
        used = [self.dtype] + [t["dtype"] for t in (*self.inputs, *self.outputs) if "dtype" in t]
        tolerance = {d: self.tolerance[d] for d in dict.fromkeys(used) if d in self.tolerance}
        tolerance |= {d: LOW_PRECISION_TOLERANCE[d] for d in used if d in LOW_PRECISION_TOLERANCE}
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
        if self.requires:
            data["requires"] = list(self.requires)
        return yaml.safe_dump(data, sort_keys=False, width=100)


def _workload_yaml(w: WorkloadDraft, dtype: str) -> dict[str, Any]:
    out: dict[str, Any] = {"id": w.id, "axes": dict(w.axes), "dtype": dtype}
    if w.source:
        out["source"] = w.source
    if w.small:
        out["small"] = True
    if w.scaled_from:
        out["scaled_from"] = w.scaled_from
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


def size(found: Any) -> int:
    """A probe's size under the npu-sim rule, in input elements: <= SMALL_ELEMENTS fits. The
    footprint (weights + largest activation) is scaled onto the same limit."""
    footprint = found.footprint() * SMALL_ELEMENTS // SMALL_FOOTPRINT
    return max(elements(s for s, _ in found.inputs), footprint)


def not_small_reason(found: Any) -> str:
    return (
        f"no workload fits the npu-sim size rule ({elements(s for s, _ in found.inputs)} input "
        f"elements, {found.footprint()} elements of weights and largest activation; limits "
        f"{SMALL_ELEMENTS} and {SMALL_FOOTPRINT}), and halving its axes does not reach it"
    )


def scale_down(
    axes: dict[str, int],
    scalable: Iterable[str],
    count: Callable[[dict[str, int]], int],
    limit: int = SMALL_ELEMENTS,
) -> dict[str, int] | None:
    """Halve (rounding up) the largest scalable axis until count(axes) <= limit; None when the
    scalable axes reach 1 first. An axis whose halving the source refuses (count raises: a
    patch size must divide the image) keeps its value and the others go on shrinking."""
    current = dict(axes)
    names = [n for n in scalable if n in current]
    size = count(current)
    while size > limit:
        live = [n for n in names if current[n] > 1]
        if not live:
            return None
        big = max(live, key=lambda n: current[n])
        trial = {**current, big: (current[big] + 1) // 2}
        try:
            size = count(trial)
        except Exception:  # the source's own checks reject this shape
            names.remove(big)
            continue
        current = trial
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
        raise SuiteError(
            f"nothing to import into suite {name}: no problem could be converted",
            hint="the reasons are listed above, one `skipped` line per problem",
        )
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
            raise SuiteError(f"no problem of suite {name} loads: {'; '.join(skipped)}")
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


def draft_all(
    paths: Iterable[Path],
    root: Path,
    draft: Callable[[Path, Path], ProblemDraft],
    *,
    empty: SuiteError,
    limits: Limits | None = None,
) -> tuple[list[ProblemDraft], list[str]]:
    """Convert every source problem, each in a child process (isolation.py: its limits and why);
    one that cannot be converted (whatever it raises, a native abort, or running past its
    limits) is named with its reason, never fatal. `draft` must be a module-level function.

    Raises `empty` when `root` held nothing to convert at all.
    """
    from farm.suite.importers import isolation

    drafts, skipped = [], []
    with isolation.Converter(draft, root, limits or isolation.Limits()) as converter:
        for path in paths:
            result = converter.convert(path)
            if isinstance(result, str):
                skipped.append(f"{path.relative_to(root)}: {result}")
            else:
                drafts.append(result)
    if not drafts and not skipped:
        raise empty
    return drafts, skipped


def reason_of(exc: Exception) -> str:
    """One line saying why converting a problem failed."""
    if isinstance(exc, SuiteError):
        return str(exc)
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else '(no message)'}"


@contextlib.contextmanager
def quiet_torch() -> Iterator[None]:
    """Silence torch's loggers and warnings while sources are probed: FakeTensorMode logs a
    traceback for every op it cannot fake, and the reason already goes to the skip list."""
    # imported first, so that their loggers exist when they are silenced
    import importlib

    importlib.import_module("torch._subclasses.fake_tensor")

    names = [n for n in logging.root.manager.loggerDict if n.startswith("torch")] + ["torch"]
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
