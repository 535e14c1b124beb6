"""Load and validate problems and suites.

Errors name the file and the field, e.g.
``core-v1/softmax/problem.yaml: workloads[2].axes.N must be a positive int``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from farm.config import farm_home, node_settings
from farm.errors import SuiteError, unknown
from farm.suite import formulas
from farm.suite.model import (
    CATEGORIES,
    COMPUTE_UNITS,
    DTYPE_SIZES,
    FLOAT_DTYPES,
    LANGUAGES,
    PASSES,
    Invariant,
    Problem,
    TensorSpec,
    Tolerance,
    Workload,
)

BUNDLED_SUITES = Path(__file__).parent / "suites"
PROBLEM_FILE = "problem.yaml"
MANIFEST = "manifest.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_KNOWN_KEYS = {
    "name",
    "category",
    "description",
    "signature",
    "inputs",
    "outputs",
    "dtypes",
    "tolerance",
    "flops",
    "bytes",
    "workloads",
    "languages",
    "pass",
    "requires",
    "invariants",
    "extra",
}


@dataclass(frozen=True)
class Suite:
    """A pinned set of problems. `hash` is the manifest's suite hash (None if unpinned)."""

    name: str
    root: Path
    problems: dict[str, Problem]
    hash: str | None

    def problem(self, name: str) -> Problem:
        if name not in self.problems:
            raise unknown("problem", name, self.problems, f"suite {self.name}")
        return self.problems[name]


def suite_dirs() -> list[Path]:
    """Directories holding suites: bundled ones, then FARM_SUITES_PATH, then the user's store."""
    return [BUNDLED_SUITES, *node_settings().suites_path, user_suite_dir()]


def user_suite_dir() -> Path:
    """Where `farm suite import` writes suites (FARM_HOME/suites)."""
    return farm_home() / "suites"


def available_suites() -> dict[str, Path]:
    """Map suite name -> directory for every suite found in suite_dirs()."""
    found: dict[str, Path] = {}
    for base in suite_dirs():
        if base.is_dir():
            for d in sorted(base.iterdir()):
                if d.is_dir() and not d.name.startswith(".") and d.name not in found:
                    found[d.name] = d
    return found


def find_suite(name_or_path: str) -> Path:
    """Resolve a suite name (or a directory path) to its directory."""
    path = Path(name_or_path)
    if path.is_dir() and ((path / MANIFEST).exists() or any(path.glob(f"*/{PROBLEM_FILE}"))):
        return path
    suites = available_suites()
    if name_or_path not in suites:
        raise unknown("suite", name_or_path, suites)
    return suites[name_or_path]


def load_suite(name_or_path: str = "core-v1", *, verify: bool = True) -> Suite:
    """Load every problem of a suite. With `verify`, the manifest must match the files."""
    root = find_suite(name_or_path)
    return _load_suite_cached(str(root.resolve()), verify)


@cache
def _load_suite_cached(root_str: str, verify: bool) -> Suite:
    from farm.suite import manifest

    root = Path(root_str)
    suite_hash = manifest.verify(root) if verify else manifest.read_hash(root)
    problems: dict[str, Problem] = {}
    for problem_file in sorted(root.glob(f"*/{PROBLEM_FILE}")):
        problem = load_problem(problem_file.parent, label=f"{root.name}/")
        problems[problem.name] = problem
    if not problems:
        raise SuiteError(f"suite {root.name} ({root}) has no problems", hint="is this a suite?")
    return Suite(name=root.name, root=root, problems=problems, hash=suite_hash)


# libyaml's safe loader where PyYAML was built with it (a suite loads about 8x faster: it is
# on every evaluation's path), else the pure-Python one; both accept the same documents.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_problem(directory: Path, *, label: str = "") -> Problem:
    """Load and validate one problem directory (problem.yaml + reference.py)."""
    where = f"{label}{directory.name}/{PROBLEM_FILE}"
    try:
        data = yaml.load((directory / PROBLEM_FILE).read_text(), Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        raise SuiteError(f"{where}: not valid YAML ({exc})") from None
    except OSError as exc:
        raise SuiteError(f"{where}: cannot read ({exc.strerror})") from None
    if not (directory / "reference.py").is_file():
        raise SuiteError(f"{label}{directory.name}/reference.py: missing")
    return _Validator(where).problem(data, directory)


class _Validator:
    """Turns parsed YAML into a Problem, raising SuiteError with file + field on the first fault."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, field: str, what: str) -> SuiteError:
        return SuiteError(f"{self.where}: {field} {what}")

    def get(self, d: dict[str, Any], key: str, kind: type | tuple[type, ...], field: str) -> Any:
        if key not in d:
            raise self.fail(field, "is required")
        value = d[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            names = (
                kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            )
            raise self.fail(field, f"must be a {names}")
        return value

    def problem(self, data: Any, directory: Path) -> Problem:
        if not isinstance(data, dict):
            raise self.fail("top level", "must be a mapping")
        unknown_keys = set(data) - _KNOWN_KEYS
        if unknown_keys:
            raise self.fail(
                sorted(unknown_keys)[0], f"is not a known key ({', '.join(sorted(_KNOWN_KEYS))})"
            )
        name = self.get(data, "name", str, "name")
        if not _NAME.match(name):
            raise self.fail("name", "must be letters, digits, '_', '-' or '.'")
        if name != directory.name:
            raise self.fail("name", f"'{name}' must equal the directory name '{directory.name}'")
        category = self.choice(data, "category", CATEGORIES)
        dtypes = tuple(
            self.dtype(d, f"dtypes[{i}]")
            for i, d in enumerate(self.get(data, "dtypes", list, "dtypes"))
        )
        inputs = self.tensors(self.get(data, "inputs", list, "inputs"), "inputs")
        outputs = self.tensors(self.get(data, "outputs", list, "outputs"), "outputs")
        if not outputs:
            raise self.fail("outputs", "must list at least one tensor")
        tolerance = self.tolerance(self.get(data, "tolerance", dict, "tolerance"), dtypes, outputs)
        flops = self.get(data, "flops", dict, "flops")
        flops_expr = self.formula(
            self.get(flops, "expr", (str, int, float), "flops.expr"), "flops.expr"
        )
        unit = self.choice(flops, "unit", COMPUTE_UNITS, "flops.unit")
        nbytes = data.get("bytes", "io")
        if nbytes != "io":
            self.formula(nbytes, "bytes")
        languages = tuple(data.get("languages", LANGUAGES))
        for i, lang in enumerate(languages):
            if lang not in LANGUAGES:
                raise self.fail(f"languages[{i}]", f"must be one of {', '.join(LANGUAGES)}")
        workloads = self.workloads(
            self.get(data, "workloads", list, "workloads"), dtypes, inputs, outputs
        )
        problem = Problem(
            name=name,
            category=category,
            description=self.get(data, "description", str, "description").strip(),
            signature=self.get(data, "signature", str, "signature").strip(),
            inputs=inputs,
            outputs=outputs,
            dtypes=dtypes,
            tolerance=tolerance,
            flops=str(flops_expr),
            compute_unit=unit,
            bytes=str(nbytes),
            workloads=workloads,
            languages=languages,
            pass_=self.choice(data, "pass", PASSES, default="forward"),
            requires=tuple(data.get("requires", ())),
            invariants=self.invariants(data.get("invariants", []), outputs, dtypes),
            directory=directory,
            extra=dict(data.get("extra", {}) or {}),
        )
        self.check_formulas(problem)
        return problem

    def choice(
        self,
        d: dict,
        key: str,
        options: tuple[str, ...],
        field: str | None = None,
        default: str | None = None,
    ) -> str:
        field = field or key
        if key not in d and default is not None:
            return default
        value = self.get(d, key, str, field)
        if value not in options:
            raise self.fail(field, f"must be one of {', '.join(options)} (got '{value}')")
        return value

    def dtype(self, value: Any, field: str) -> str:
        if value not in DTYPE_SIZES:
            raise self.fail(
                field, f"must be a dtype name ({', '.join(DTYPE_SIZES)}), got {value!r}"
            )
        return str(value)

    def formula(self, expr: Any, field: str) -> Any:
        try:
            formulas.names_in(str(expr))
        except formulas.FormulaError as exc:
            raise self.fail(field, f"is not a valid formula: {exc}") from None
        return expr

    def tensors(self, items: list, field: str) -> tuple[TensorSpec, ...]:
        specs = []
        for i, item in enumerate(items):
            f = f"{field}[{i}]"
            if not isinstance(item, dict):
                raise self.fail(f, "must be a mapping with name and shape")
            shape = self.get(item, "shape", list, f"{f}.shape")
            for j, dim in enumerate(shape):
                if isinstance(dim, bool) or not isinstance(dim, str | int):
                    raise self.fail(f"{f}.shape[{j}]", "must be an axis name, an int or a formula")
                if isinstance(dim, str):
                    self.formula(dim, f"{f}.shape[{j}]")
            dtype = item.get("dtype")
            if dtype is not None:
                self.dtype(dtype, f"{f}.dtype")
            specs.append(TensorSpec(self.get(item, "name", str, f"{f}.name"), tuple(shape), dtype))
        return tuple(specs)

    def tolerance(
        self, data: dict, dtypes: tuple[str, ...], outputs: tuple[TensorSpec, ...]
    ) -> dict[str, Tolerance]:
        needed = {o.resolved_dtype(d) for d in dtypes for o in outputs} & FLOAT_DTYPES
        needed |= set(dtypes) & FLOAT_DTYPES
        result = {}
        for dtype, tol in data.items():
            f = f"tolerance.{dtype}"
            self.dtype(dtype, f)
            if not isinstance(tol, dict):
                raise self.fail(f, "must be a mapping with atol and rtol")
            atol = self.get(tol, "atol", (int, float), f"{f}.atol")
            rtol = self.get(tol, "rtol", (int, float), f"{f}.rtol")
            norm = tol.get("norm_rtol")
            if norm is not None and (not isinstance(norm, int | float) or norm <= 0):
                raise self.fail(f"{f}.norm_rtol", "must be a positive number when given")
            if atol < 0 or rtol < 0:
                raise self.fail(f, "atol and rtol must be >= 0")
            unknown_keys = sorted(set(tol) - {"atol", "rtol", "norm_rtol"})
            if unknown_keys:
                raise self.fail(f"{f}.{unknown_keys[0]}", "unknown key (atol, rtol, norm_rtol)")
            result[dtype] = Tolerance(
                float(atol), float(rtol), None if norm is None else float(norm)
            )
        missing = sorted(needed - set(result))
        if missing:
            raise self.fail(
                f"tolerance.{missing[0]}", "is required (a workload or output uses this dtype)"
            )
        return result

    def invariants(
        self, items: Any, outputs: tuple[TensorSpec, ...], dtypes: tuple[str, ...]
    ) -> tuple[Invariant, ...]:
        """`invariants:` entries: {kind: sum, output, dim, value, tolerance: {dtype: x}} or
        {kind: bounds, output, low, high, tolerance: {dtype: x}}."""
        if not isinstance(items, list):
            raise self.fail("invariants", "must be a list")
        names = [o.name for o in outputs]
        found = []
        for i, item in enumerate(items):
            f = f"invariants[{i}]"
            if not isinstance(item, dict):
                raise self.fail(f, "must be a mapping")
            kind = self.choice(item, "kind", ("sum", "bounds"), f"{f}.kind")
            output = self.get(item, "output", str, f"{f}.output")
            if output not in names:
                raise self.fail(f"{f}.output", f"'{output}' is not an output ({', '.join(names)})")
            tol = self.get(item, "tolerance", dict, f"{f}.tolerance")
            missing = sorted(set(dtypes) - set(tol))
            if missing:
                raise self.fail(f"{f}.tolerance.{missing[0]}", "is required (a workload dtype)")
            numbers = {k: float(v) for k, v in item.items() if k in ("value", "low", "high")}
            found.append(
                Invariant(
                    kind=kind,
                    output=names.index(output),
                    tolerance={str(k): float(v) for k, v in tol.items()},
                    dim=int(item.get("dim", -1)),
                    **numbers,
                )
            )
        return tuple(found)

    def workloads(
        self,
        items: list,
        dtypes: tuple[str, ...],
        inputs: tuple[TensorSpec, ...],
        outputs: tuple[TensorSpec, ...],
    ) -> tuple[Workload, ...]:
        axis_names = set()
        for spec in (*inputs, *outputs):
            for dim in spec.shape:
                if isinstance(dim, str):
                    axis_names |= formulas.names_in(dim)
        result: list[Workload] = []
        seen: set[str] = set()
        for i, item in enumerate(items):
            f = f"workloads[{i}]"
            if not isinstance(item, dict):
                raise self.fail(f, "must be a mapping")
            wid = self.get(item, "id", str, f"{f}.id")
            if wid in seen:
                raise self.fail(f"{f}.id", f"'{wid}' is used twice")
            seen.add(wid)
            axes = self.get(item, "axes", dict, f"{f}.axes")
            for axis, value in axes.items():
                if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                    raise self.fail(f"{f}.axes.{axis}", "must be a positive int")
            missing = sorted(axis_names - set(axes))
            if missing:
                raise self.fail(f"{f}.axes.{missing[0]}", "is required (used by a tensor shape)")
            dtype = self.dtype(item.get("dtype", dtypes[0] if dtypes else None), f"{f}.dtype")
            if dtype not in dtypes:
                raise self.fail(f"{f}.dtype", f"'{dtype}' is not in the problem's dtypes")
            result.append(
                Workload(
                    id=wid,
                    axes=dict(axes),
                    dtype=dtype,
                    model=item.get("model"),
                    source=item.get("source"),
                    small=bool(item.get("small", False)),
                    scaled_from=item.get("scaled_from"),
                )
            )
        if not result:
            raise self.fail("workloads", "must list at least one workload")
        for i, w in enumerate(result):
            if w.scaled_from is not None and w.scaled_from not in seen:
                raise self.fail(f"workloads[{i}].scaled_from", "must name a workload listed here")
        return tuple(result)

    def check_formulas(self, problem: Problem) -> None:
        for i, w in enumerate(problem.workloads):
            f = f"workloads[{i}]"
            try:
                flops = problem.flop_count(w)
                nbytes = problem.compulsory_bytes(w)
                for spec in (*problem.inputs, *problem.outputs):
                    spec.resolved_shape(w.axes)
            except (formulas.FormulaError, ZeroDivisionError) as exc:
                raise self.fail(f, f"cannot evaluate a formula: {exc}") from None
            if flops < 0 or nbytes <= 0:
                raise self.fail(
                    f, f"gives flops={flops}, bytes={nbytes}; flops must be >= 0 and bytes > 0"
                )
