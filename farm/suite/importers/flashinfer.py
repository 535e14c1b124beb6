"""flashinfer-trace: import definitions + workloads (+ solutions), export suites, submissions
and result documents.

A dataset folder holds `definitions/**/*.json`, workloads as JSONL (`workloads/**/*.jsonl`;
`traces/` holds evaluation records of solutions, not workloads, and is not read) and
`solutions/**/*.json`. Each definition becomes a problem: `const` axes keep their value in every
workload, `var` axes take each workload's values (a workload breaking the definition's
`constraints` is skipped and named), and the definition's `reference` code (its `run`) is the
reference. Inputs marked `random` are drawn as flashinfer-bench draws them
(flashinfer_bench/bench/utils.py `_rand_tensor`: normal floats, low-precision floats clamped to
[-2, 2], ints uniform in [-1024, 1024) and int8 in [-128, 128), bools 0/1) from the harness's
generator; `scalar` inputs must have one value across workloads; workloads with `safetensors`
inputs are skipped (the data is not portable). Outputs are judged by flashinfer-bench's own rule
(`compute_error_stats`: an element fails when its absolute error exceeds atol AND its relative
error exceeds rtol, in float32; an output fails when fewer than the required ratio of its
elements pass), the problem's `check`; atol, rtol and the ratio are resolved from the definition
as flashinfer-bench resolves them (flashinfer_rules.eval_rule: its eval_config by op_type and
name, its low-bit evaluator's 0.95).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from farm.errors import SuiteError
from farm.result import Result, WorkloadEntry, WorkloadStatus
from farm.suite.importers import common, probe
from farm.suite.importers import flashinfer_rules as rules
from farm.suite.model import CATEGORIES

DTYPES = {"float8_e4m3": "float8_e4m3fn", "float8_e4m3fn": "float8_e4m3fn"}
_OURS_TO_THEIRS = {"float8_e4m3fn": "float8_e4m3"}
TYPE_CATEGORY = {
    "gemm": "gemm",
    "grouped_gemm": "gemm",
    "batch_gemm": "gemm",
    "mha": "attention",
    "gqa": "attention",
    "mla": "attention",
    "norm": "normalization",
    "sampling": "topk",
    "moe": "fused",
}
STATUS = {
    "PASSED": "PASSED",
    "INCORRECT": "INCORRECT_NUMERICAL",
    "RUNTIME_ERROR": "RUNTIME_ERROR",
    "COMPILE_ERROR": "COMPILE_ERROR",
    "TIMEOUT": "TIMEOUT",
    "REJECTED": "RUNTIME_ERROR",  # flashinfer-trace has no "rejected"; the log says why
}


# --- import -----------------------------------------------------------------------------------
def import_dir(root: Path) -> tuple[list[common.ProblemDraft], list[str]]:
    definitions = {d["name"]: (p, d) for p, d in _json_files(root, "definitions")}
    if not definitions:
        raise SuiteError(
            f"{root}: no flashinfer-trace definitions (definitions/**/*.json)",
            hint="pass the dataset folder holding definitions/ and workloads/",
        )
    workloads = _workloads(root)
    drafts, skipped = [], []
    for name, (path, definition) in sorted(definitions.items()):
        try:
            draft, notes = problem_draft(definition, workloads.get(name, []))
            drafts.append(draft)
            skipped += [f"{path.relative_to(root)}: {n}" for n in notes]
        except Exception as exc:  # the definition's own code may raise anything
            skipped.append(f"{path.relative_to(root)}: {common.reason_of(exc)}")
    return drafts, skipped


def _json_files(root: Path, folder: str) -> list[tuple[Path, dict[str, Any]]]:
    found = []
    for path in sorted((root / folder).rglob("*.json")):
        try:
            found.append((path, json.loads(path.read_text())))
        except json.JSONDecodeError as exc:
            raise SuiteError(f"{path}: not valid JSON ({exc})") from None
    return found


def _workloads(root: Path) -> dict[str, list[dict[str, Any]]]:
    """Workloads by definition name, from workloads/ JSONL, de-duplicated by uuid."""
    by_def: dict[str, dict[str, dict[str, Any]]] = {}
    for folder in ("workloads",):
        for path in sorted((root / folder).rglob("*.jsonl")):
            for lineno, line in enumerate(path.read_text().splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise SuiteError(f"{path}:{lineno}: not valid JSON ({exc})") from None
                work = entry.get("workload") or {}
                key = str(work.get("uuid") or len(by_def.get(entry.get("definition"), {})))
                by_def.setdefault(entry.get("definition"), {}).setdefault(key, work)
    return {name: list(items.values()) for name, items in by_def.items()}


def _dtype(name: str, where: str) -> str:
    from farm.suite.model import DTYPE_SIZES

    ours = DTYPES.get(name, name)
    if ours not in DTYPE_SIZES:
        raise ValueError(f"{where}: dtype {name} is not supported")
    return ours


def problem_draft(
    definition: dict[str, Any], workloads: list[dict[str, Any]]
) -> tuple[common.ProblemDraft, list[str]]:
    name = definition["name"]
    axes_def = definition.get("axes") or {}
    consts = {a: int(v["value"]) for a, v in axes_def.items() if v.get("type") == "const"}
    inputs = [
        {"name": n, "shape": list(t.get("shape") or []), "dtype": _dtype(t["dtype"], n)}
        for n, t in definition["inputs"].items()
    ]
    outputs = [
        {"name": n, "shape": list(t.get("shape") or []), "dtype": _dtype(t["dtype"], n)}
        for n, t in definition["outputs"].items()
    ]
    dtype = next((s["dtype"] for s in inputs if s["dtype"].startswith(("float", "bf"))), "float32")
    scalars, random_ints, notes = _input_kinds(inputs, workloads)
    drafts: list[common.WorkloadDraft] = []
    for w in workloads:
        kinds = {d.get("type") for d in (w.get("inputs") or {}).values()}
        if "safetensors" in kinds:
            notes.append(f"workload {w.get('uuid')}: safetensors inputs are not portable; skipped")
            continue
        axes = {**consts, **{k: int(v) for k, v in (w.get("axes") or {}).items()}}
        broken = rules.broken_constraint(definition, axes)
        if broken:
            notes.append(f"workload {w.get('uuid')}: breaks the constraint {broken}; skipped")
            continue
        wid = f"wl{len(drafts)}-{str(w.get('uuid') or '')[:8]}".rstrip("-")
        drafts.append(common.WorkloadDraft(wid, axes, _fits(inputs, axes), "flashinfer-trace"))
    if not drafts:
        raise ValueError("no usable workloads (none found, or all use safetensors inputs)")
    if not any(d.small for d in drafts):
        var = [a for a in axes_def if a not in consts]
        small = common.scale_down(drafts[0].axes, var, lambda a: rules.size(definition, inputs, a))
        if small is not None:
            drafts.append(
                common.WorkloadDraft(
                    "small", small, True, "scaled for npu-sim", scaled_from=drafts[0].id
                )
            )
    rule = rules.eval_rule(definition)
    ref = rules.TEMPLATE.format(
        name=name,
        inputs=[(s["name"], s["shape"], s["dtype"]) for s in inputs],
        outputs=[s["name"] for s in outputs],
        scalars=scalars,
        atol=rule.atol,
        rtol=rule.rtol,
        ratio=rule.matched_ratio,
    )
    flops, note = _flops(
        definition, inputs, drafts[0].axes, [a for a in axes_def if a not in consts]
    )
    op_type = rules.op_type(definition)
    category = TYPE_CATEGORY.get(op_type) or (
        op_type if op_type in CATEGORIES else common.guess_category(name)
    )
    extra: dict[str, Any] = {"imported_from": {"format": "flashinfer-trace", "definition": name}}
    extra["checker"] = (
        f"flashinfer-bench's compute_error_stats: atol = {rule.atol:g}, rtol = {rule.rtol:g}, "
        f"matched ratio >= {rule.matched_ratio:g} (eval_config for op_type {op_type})"
    )
    if op_type == "sampling" or name.startswith("dsa_"):
        extra["stricter"] = (
            "flashinfer-bench judges this kind with its own evaluator (a frequency test for "
            "sampling, index overlap for DSA); the farm compares the outputs element-wise"
        )
    if definition.get("constraints"):
        extra["constraints"] = list(definition["constraints"])
    extra |= {"tags": list(definition.get("tags") or [])}
    if note:
        extra["flops_note"] = note
    if random_ints:
        extra["int_inputs"] = (
            f"{', '.join(random_ints)}: drawn as flashinfer-bench does "
            "(uniform in [-1024, 1024), int8 in [-128, 128), bools 0/1)"
        )
    draft = common.ProblemDraft(
        name=common.axis_name(name, set()) if not name[0].isalnum() else name,
        category=category,
        description=" ".join(str(definition.get("description") or name).split())[:300],
        signature=f"run({', '.join(s['name'] for s in inputs)})",
        inputs=inputs,
        outputs=outputs,
        dtype=dtype,
        workloads=drafts,
        flops=flops,
        compute_unit=common.compute_unit(category),
        reference=ref,
        tolerance=rule.tolerance(),
        files={"definition.json": json.dumps(definition, indent=1) + "\n"},
        extra=extra,
    )
    return draft, notes


def _input_kinds(inputs, workloads) -> tuple[dict[str, Any], list[str], list[str]]:
    """Scalar inputs' single values, names of int inputs drawn at random, and notes."""
    scalars: dict[str, Any] = {}
    ints: list[str] = []
    notes: list[str] = []
    for spec in inputs:
        values = {
            json.dumps((w.get("inputs") or {}).get(spec["name"], {}).get("value"))
            for w in workloads
            if (w.get("inputs") or {}).get(spec["name"], {}).get("type") == "scalar"
        }
        if len(values) > 1:
            raise ValueError(f"scalar input {spec['name']} differs between workloads")
        if values:
            scalars[spec["name"]] = json.loads(values.pop())
        elif not spec["dtype"].startswith(("float", "bf")):
            ints.append(spec["name"])
    return scalars, ints, notes


def _fits(specs: list[dict[str, Any]], axes: dict[str, int]) -> bool:
    return rules.elements(specs, axes) <= common.SMALL_ELEMENTS


def _flops(definition, inputs, axes, names) -> tuple[str, str | None]:
    namespace: dict[str, Any] = {}
    exec(compile(definition["reference"], f"<{definition['name']}>", "exec"), namespace)

    def count(a: dict[str, int]) -> int:
        import torch

        def make() -> tuple[Any, Any]:
            args = [
                torch.empty(
                    [a[d] if isinstance(d, str) else d for d in s["shape"]],
                    dtype=getattr(torch, s["dtype"]),
                )
                for s in inputs
            ]
            return args, _as_tuple(namespace["run"](*args))

        return probe.fake_probe(make).flops

    try:
        return common.flops_formula(count, axes, names)
    except Exception as exc:
        return "0", f"FLOPs not counted ({type(exc).__name__}); set to 0"


def _as_tuple(out: Any) -> Any:
    return tuple(out.values()) if isinstance(out, dict) else out


# --- export -----------------------------------------------------------------------------------
def _dim_names(problem) -> dict[str | int, str]:
    """flashinfer-trace axis name of each dim: the axis itself, `n<value>` for an int, and a
    derived name (`H_2` for `H // 2`) for a formula."""
    names: dict[str | int, str] = {}
    for spec in (*problem.inputs, *problem.outputs):
        for d in spec.shape:
            if d in names:
                continue
            if isinstance(d, int):
                names[d] = f"n{d}"
            elif d.isidentifier():
                names[d] = d
            else:
                names[d] = common.axis_name(d.replace(" ", ""), set(names.values()))
    return names


def _dim_value(dim: str | int, axes: dict[str, int]) -> int:
    from farm.suite import formulas

    return dim if isinstance(dim, int) else int(formulas.evaluate(dim, axes))


def definition_from_problem(problem) -> dict[str, Any]:
    """A flashinfer-trace Definition of one of our problems: dims that are the same in every
    workload are `const` axes, the others `var`; an int dim is a `const` axis `n<value>` and a
    formula dim gets an axis of its own."""
    names = _dim_names(problem)
    axes: dict[str, Any] = {}
    for dim, axis in names.items():
        values = {_dim_value(dim, w.axes) for w in problem.workloads}
        only = values.pop() if len(values) == 1 else None
        axes[axis] = {"type": "const", "value": only} if only else {"type": "var"}

    def tensor(spec, dtype: str) -> dict[str, Any]:
        dt = spec.resolved_dtype(dtype)
        return {"shape": [names[d] for d in spec.shape], "dtype": _OURS_TO_THEIRS.get(dt, dt)}

    dtype = problem.dtypes[0]
    reference = problem.reference_path.read_text()
    return {
        "name": problem.name,
        "type": problem.category,
        "tags": [f"farm:{problem.category}"],
        "description": problem.description,
        "axes": axes,
        "inputs": {s.name: tensor(s, dtype) for s in problem.inputs},
        "outputs": {s.name: tensor(s, dtype) for s in problem.outputs},
        "reference": reference + "\n\ndef run(*inputs):\n    return reference(*inputs)\n",
    }


def workload_id(suite_hash: str | None, problem: str, workload: str) -> str:
    """A stable uuid for one of our workloads (same suite version -> same uuid)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"farm:{suite_hash}:{problem}:{workload}"))


def workload_entries(problem, suite_hash: str | None) -> list[dict[str, Any]]:
    definition = definition_from_problem(problem)
    var = {a for a, v in definition["axes"].items() if v["type"] == "var"}
    dims = {axis: dim for dim, axis in _dim_names(problem).items() if axis in var}
    return [
        {
            "definition": problem.name,
            "workload": {
                "uuid": workload_id(suite_hash, problem.name, w.id),
                "axes": {a: _dim_value(d, w.axes) for a, d in dims.items()},
                "inputs": {s.name: {"type": "random"} for s in problem.inputs},
            },
            "solution": None,
            "evaluation": None,
        }
        for w in problem.workloads
    ]


def solution_from_source(
    source: str, *, problem: str, name: str, author: str, hardware: list[str]
) -> dict[str, Any]:
    """A flashinfer-trace Solution of a native submission file (entry point `kernel`)."""
    language = "triton" if "triton" in source else "python"
    return {
        "name": name,
        "definition": problem,
        "author": author,
        "description": f"farm submission for {problem}",
        "spec": {
            "language": language,
            "target_hardware": hardware,
            "entry_point": "main.py::kernel",
            "destination_passing_style": False,
            "dependencies": ["torch", *(["triton"] if language == "triton" else [])],
        },
        "sources": [{"path": "main.py", "content": source}],
    }


def source_from_solution(solution: dict[str, Any], definition: dict[str, Any]) -> str:
    """A native submission file (`kernel(*inputs)`) from a single-file Python/Triton Solution."""
    spec = solution.get("spec") or {}
    if str(spec.get("language", "")).lower() not in ("python", "triton"):
        raise ValueError(f"solution {solution.get('name')}: only python/triton can be converted")
    file, _, fn = str(spec.get("entry_point", "")).partition("::")
    sources = {s["path"]: s["content"] for s in solution.get("sources") or []}
    if file not in sources or len(sources) != 1:
        raise ValueError(f"solution {solution.get('name')}: needs exactly one file, {file}")
    axes = definition.get("axes") or {}
    consts = {a: v["value"] for a, v in axes.items() if v.get("type") == "const"}
    adapter = _ADAPTER.format(
        fn=fn,
        dps=bool(spec.get("destination_passing_style", True)),
        inputs=[list(t.get("shape") or []) for t in definition["inputs"].values()],
        outputs=[
            (name, list(t.get("shape") or []), DTYPES.get(t["dtype"], t["dtype"]))
            for name, t in definition["outputs"].items()
        ],
        consts=consts,
    )
    return sources[file].rstrip() + "\n\n" + adapter


_ADAPTER = """# --- entry point for the farm (kernel(*inputs) calls the solution's {fn}) ---
_FI_DPS = {dps!r}  # the solution's destination_passing_style (flashinfer-bench's default: true)
_FI_INPUT_SHAPES = {inputs!r}
_FI_OUTPUTS = {outputs!r}
_FI_CONSTS = {consts!r}


def _fi_destination_passing(n_inputs):
    \"\"\"Whether {fn} takes the outputs as its last arguments: its signature decides when it
    takes exactly the inputs (return style) or inputs + outputs; else the solution's flag.\"\"\"
    import inspect

    try:
        params = inspect.signature({fn}).parameters.values()
    except (TypeError, ValueError):
        return _FI_DPS
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return _FI_DPS
    count = len(params)
    if count == n_inputs:
        return False
    return True if count == n_inputs + len(_FI_OUTPUTS) else _FI_DPS


def kernel(*inputs):
    import torch

    if not _fi_destination_passing(len(inputs)):
        out = {fn}(*inputs)
        return tuple(out[n] for n, _, _ in _FI_OUTPUTS) if isinstance(out, dict) else out
    kinds = (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int8)
    dtypes = {{str(t).removeprefix("torch."): t for t in kinds}}
    sizes = dict(_FI_CONSTS)
    for shape, tensor in zip(_FI_INPUT_SHAPES, inputs):
        sizes.update({{axis: int(d) for axis, d in zip(shape, tensor.shape)}})
    outs = [
        torch.empty([sizes[a] for a in shape], dtype=dtypes[dt], device=inputs[0].device)
        for _, shape, dt in _FI_OUTPUTS
    ]
    {fn}(*inputs, *outs)
    return outs[0] if len(outs) == 1 else tuple(outs)
"""


def convert_solutions(root: Path, out: Path) -> tuple[list[Path], list[str]]:
    """Write each solution under root/solutions as a native submission out/<definition>/<name>.py;
    returns the files written and a note per solution that could not be converted."""
    definitions = {d["name"]: d for _, d in _json_files(root, "definitions")}
    written, notes = [], []
    for path, solution in _json_files(root, "solutions"):
        definition = definitions.get(solution.get("definition"))
        try:
            if definition is None:
                raise ValueError(f"its definition {solution.get('definition')!r} is not in {root}")
            text = source_from_solution(solution, definition)
        except (ValueError, KeyError) as exc:
            notes.append(f"{path.relative_to(root)}: {exc}")
            continue
        target = out / definition["name"] / f"{solution['name']}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written.append(target)
    return written, notes


def traces_from_result(doc: dict[str, Any], *, solution: str) -> list[dict[str, Any]]:
    """One flashinfer-trace Trace per evaluated workload of a farm.result/1 document.
    latency_ms is the candidate's mean (median when no mean was kept), reference_latency_ms the
    eager baseline's. Raises farm.result.ResultSchemaError naming a bad field."""
    result = Result.from_json(doc)
    before = result.environment.before or {}
    libs = {k: str(v) for k, v in before.items() if k in ("torch", "triton")}
    libs = {k: v for k, v in libs.items() if v != "None"}
    stamp = _timestamp(doc)
    traces = []
    for w in result.workloads:
        if w.status == WorkloadStatus.SKIPPED:
            continue
        traces.append(
            {
                "definition": result.problem,
                "workload": {
                    "uuid": workload_id(result.suite_hash, result.problem, w.id),
                    "axes": dict(w.extra.get("axes") or {}),
                    "inputs": {},
                },
                "solution": solution,
                "evaluation": _evaluation(result, w, libs, stamp),
            }
        )
    return traces


def _evaluation(
    result: Result, w: WorkloadEntry, libs: dict[str, str], stamp: str
) -> dict[str, Any]:
    status = STATUS.get(w.status.value, "RUNTIME_ERROR")
    corr = w.extra.get("correctness") or {}
    correctness = None
    if status in ("PASSED", "INCORRECT_NUMERICAL") and corr:
        correctness = {
            "max_relative_error": corr.get("max_rel_err"),
            "max_absolute_error": corr.get("max_abs_err"),
        }
    performance = None
    latency = (w.timing.mean_ms if w.timing else None) or w.time_ms
    eager = w.baseline_timing.get("eager")
    baseline = (eager.mean_ms if eager else None) or w.baseline_ms.get("eager")
    if status == "PASSED" and latency:
        performance = {
            "latency_ms": latency,
            "reference_latency_ms": baseline,
            "speedup_factor": (baseline / latency) if baseline else None,
        }
    log = [f"{e.code}: {e.detail}" for e in w.errors]
    log += [f"{r.code}: {r.detail}" for r in result.reasons]
    if w.status == WorkloadStatus.REJECTED:
        log.insert(0, "REJECTED by the farm's guard (reported as RUNTIME_ERROR)")
    return {
        "status": status,
        "log": "\n".join(log),
        "correctness": correctness,
        "performance": performance,
        "environment": {"hardware": result.hardware, "libs": libs},
        "timestamp": stamp,
    }


def _timestamp(doc: dict[str, Any]) -> str:
    started = (doc.get("timing") or {}).get("started_at")
    when = datetime.fromtimestamp(started, UTC) if started else datetime.now(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")
