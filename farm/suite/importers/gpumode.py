"""`farm suite import gpumode DIR`: GPU MODE problems (a folder with reference.py + task.yml) as
problems of our format.

`generate_input(**spec)` makes the data, `ref_kernel(data)` the expected output and
`check_implementation(data, output)` judges a submission's output: it is the problem's checker
(its own rtol/atol, residual checks, size-scaled tolerances), never a flat tolerance. task.yml's
`tests` and `benchmarks` entries are the workloads, every one of them: the positive int
parameters present in every entry (all but `seed`) are axes; the other parameters (strings,
bools, lists, zeros, keys only some entries have) form a `variant`, an axis numbering the distinct
sets of them. The source files are kept verbatim in `source/` (with the nearest `utils.py` above
them); `reference.py` draws a `seed` for `generate_input` from the harness's generator and runs
the source with CUDA redirected to the evaluating device (device_neutral.py), so CUDA-only
sources import and run on a CPU host. Data that is a tuple of tensors is passed as the inputs in
order; a submission's `custom_kernel(data)` receives that tuple. Other data (nested containers,
dataclasses, modules, non-tensor leaves) travels as its tensors and is rebuilt around them
(structured.py) before custom_kernel receives it.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

import yaml

from farm.errors import SuiteError
from farm.suite.importers import (
    common,
    gpumode_pair,
    gpumode_shapes,
    probe,
    structured,
)
from farm.suite.importers.loading import load_module

SOURCE_DIR = gpumode_pair.SOURCE_DIR
VARIANT = "variant"  # the axis numbering a workload's set of non-axis parameters (1-based)


def find_problems(root: Path) -> list[Path]:
    """Problem folders under `root`: those holding both task.yml and reference.py."""
    return sorted(p.parent for p in root.rglob("task.yml") if (p.parent / "reference.py").is_file())


def import_dir(root: Path) -> tuple[list[common.ProblemDraft], list[str]]:
    empty = SuiteError(
        f"{root}: no GPU MODE problems (folders with task.yml and reference.py)",
        hint="pass the folder holding the problem folders",
    )
    return common.draft_all(find_problems(root), root, problem_draft, empty=empty)


# Packages only one vendor's stack provides: a source that imports one cannot run elsewhere.
VENDOR_PACKAGES = {"aiter": "AMD ROCm"}
MULTI_GPU_PARAMETERS = ("rank", "world_size")


def problem_draft(folder: Path, root: Path) -> common.ProblemDraft:
    task = _task(folder)
    helpers = _helpers(folder, root)
    _check_runnable(folder / "reference.py")
    module = load_module(folder / "reference.py", search=[h.parent for h in helpers])
    if not hasattr(module, "generate_input") and gpumode_pair.applies(folder, module):
        return gpumode_pair.problem_draft(folder, root, module, task, helpers)
    for needed in ("generate_input", "ref_kernel"):
        if not hasattr(module, needed):
            raise SuiteError(f"{folder.name}/reference.py: defines no `{needed}`")
    entries = _entries(task)
    axes_names, variants = _split_params(entries)
    first_axes = {k: entries[0][1][k] for k in axes_names}
    first_spec = _spec(first_axes, axes_names, variants)
    probe_at, model = gpumode_shapes.model(
        lambda axes: _spec(axes, axes_names, variants), first_axes, module
    )
    base = probe_at(first_axes)
    try:
        workloads = _workloads(entries, axes_names, variants, probe_at, model, base)
    except _ShapeDrift:  # dims that follow the axes at the first test only: probe each entry
        every = [_entry_axes(spec, axes_names, variants) for _, spec in entries]
        model = gpumode_shapes.loosened(model, [(a, probe_at(a)) for a in every])
        workloads = _workloads(entries, axes_names, variants, probe_at, model, base)
    name = common.problem_name(folder, root)
    dtype = next((d for _, d in base.inputs if d.startswith(("float", "bfloat"))), "float32")
    try:
        flops, note = common.flops_formula(lambda a: probe_at(a).flops, first_axes, axes_names)
    except Exception as exc:  # the source refuses a doubled axis (lists sized by another)
        flops, note = "0", f"FLOPs set to 0: probing doubled axes failed ({common.reason_of(exc)})"
    category = common.guess_category(name)
    extra: dict[str, Any] = {
        "imported_from": {"format": "gpumode", "folder": str(folder.relative_to(root))},
        "seeds": "task.yml seeds are not used: the harness draws its own (secret in leaderboard)",
    }
    if hasattr(module, "check_implementation"):
        extra["checker"] = "the source's check_implementation(data, output)"
    if note:
        extra["flops_note"] = note
    data_kind, structure = gpumode_shapes.data_kind(module, first_spec)
    extra["gpumode_data"] = data_kind
    if structure:
        extra["gpumode_structure"] = structure
    if model.collapsed:
        extra["inputs_note"] = gpumode_shapes.COLLAPSED_NOTE
        extra["input_tensors"] = max(
            gpumode_shapes.tensor_count(module, _spec(w.axes, axes_names, variants))
            for w in workloads
        )
    requires = _requires(folder / "reference.py", base)
    if requires:
        extra["requires_note"] = "fp4 inputs multiplied by torch._scaled_mm: fp4 matrix hardware"
    _mark_cpu_runnable(module, workloads, axes_names, variants, base, extra)
    files = gpumode_pair.source_files(folder, helpers)
    files["structured.py"] = Path(structured.__file__).read_text()
    prefix = "data_" if model.collapsed else "data"
    inputs = _specs(model.inputs, base.inputs, dtype, prefix, by_dtype=model.collapsed)
    return common.ProblemDraft(
        name=name,
        category=category,
        description=" ".join(str(task.get("description") or f"GPU MODE {folder.name}").split())[
            :300
        ],
        signature=f"ref_kernel(({', '.join(s['name'] for s in inputs)},))"
        if data_kind != "structured"
        else f"ref_kernel(data) with data = {structure}",
        inputs=inputs,
        outputs=_specs(
            model.outputs,
            base.outputs,
            dtype,
            "out_" if model.collapsed else "out",
            by_dtype=model.collapsed,
        ),
        dtype=dtype,
        workloads=workloads,
        flops=flops,
        compute_unit=common.compute_unit(category),
        reference=_TEMPLATE.format(
            folder=folder.name,
            axes=axes_names,
            variants=variants,
            source=SOURCE_DIR,
            kind=data_kind,
            loader=gpumode_pair.SOURCE_LOADER,
        ),
        files=files,
        extra=extra,
        requires=requires,
    )


def _requires(reference: Path, base: probe.Probe) -> list[str]:
    """Hardware features the source's own reference needs: fp4 matrix units when it multiplies
    packed fp4 data with torch._scaled_mm (Blackwell; an H100 has none)."""
    fp4 = any(d == "float4_e2m1fn_x2" for _, d in base.inputs)
    return ["fp4"] if fp4 and "_scaled_mm" in reference.read_text() else []


def _check_runnable(reference: Path) -> None:
    """SuiteError when the source is a problem this host cannot run, whatever a submission does:
    it needs a vendor-only package that is not installed, or several GPUs."""
    try:
        tree = ast.parse(reference.read_text())
    except SyntaxError:
        return  # importing it reports the error
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        for top in {n.split(".")[0] for n in names} & set(VENDOR_PACKAGES):
            if importlib.util.find_spec(top) is None:
                raise SuiteError(
                    f"needs the `{top}` package ({VENDOR_PACKAGES[top]}); not runnable on this host"
                )
        if isinstance(node, ast.FunctionDef) and node.name == "generate_input":
            params = {a.arg for a in (*node.args.args, *node.args.kwonlyargs)}
            if params & set(MULTI_GPU_PARAMETERS):
                raise SuiteError(
                    "multi-GPU problem (needs world_size/rank); single-GPU farm nodes do not run it"
                )


def _task(folder: Path) -> dict[str, Any]:
    try:
        task = yaml.safe_load((folder / "task.yml").read_text())
    except yaml.YAMLError as exc:
        raise SuiteError(f"{folder.name}/task.yml: not valid YAML ({exc})") from None
    if not isinstance(task, dict):
        raise SuiteError(f"{folder.name}/task.yml: must be a mapping")
    return task


def _helpers(folder: Path, root: Path) -> list[Path]:
    """The nearest utils.py above the problem folder (GPU MODE keeps shared helpers there)."""
    if (folder / "utils.py").exists():
        return []
    for parent in [folder, *folder.parents]:
        if (parent / "utils.py").is_file():
            return [parent / "utils.py"]
        if parent == root:
            break
    return []


def _entries(task: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    entries = []
    for key, prefix in (("tests", "test"), ("benchmarks", "bench")):
        for i, spec in enumerate(task.get(key) or []):
            if not isinstance(spec, dict):
                raise SuiteError(f"task.yml: {key}[{i}] must be a mapping of parameters")
            entries.append((f"{prefix}-{i}", spec))
    if not entries:
        raise SuiteError("task.yml: lists no tests or benchmarks")
    return entries


def _split_params(entries) -> tuple[list[str], list[dict[str, Any]]]:
    """Axis names (positive int parameters every entry has) and the distinct sets of the other
    parameters (`variant` n is the n-th set)."""
    keys = sorted({k for _, s in entries for k in s} - {"seed"})
    axes = [
        k
        for k in keys
        if all(type(s.get(k)) is int and s[k] > 0 for _, s in entries) and k != VARIANT
    ]
    variants: list[dict[str, Any]] = []
    for _, spec in entries:
        rest = {k: v for k, v in spec.items() if k not in axes and k != "seed"}
        if rest not in variants:
            variants.append(rest)
    return axes, variants


def _spec(axes: dict[str, int], names: list[str], variants: list[dict[str, Any]]) -> dict:
    """generate_input's keyword arguments (all but seed) for a workload's axes."""
    return {**variants[axes.get(VARIANT, 1) - 1], **{k: int(axes[k]) for k in names}}


def _mark_cpu_runnable(module, workloads, axes_names, variants, base, extra) -> None:
    """The inputs the source's ref_kernel writes go to `writable_inputs` (GPU MODE hands
    kernels destination buffers inside `data`; a submission may write them too). The source
    runs for real on the CPU at its first small workload; one that cannot (fp4 matrix products)
    leaves no workload small and says why in `not_small`, so CPU and npu-sim answer "not
    runnable on this device"."""
    small = [w for w in workloads if w.small]
    at = _spec((small or workloads)[0].axes, axes_names, variants)
    written = gpumode_shapes.written_inputs(module, at)
    if written:
        extra["writable_inputs"] = written
    if not small:
        extra["not_small"] = common.not_small_reason(base)
        return
    try:
        gpumode_shapes.run_on_cpu(module, at)
    except Exception as exc:  # the source's own code on a device it was not written for
        for w in workloads:
            w.small = False
        extra["not_small"] = f"its reference does not run on a CPU ({common.reason_of(exc)})"


def _workloads(entries, axes_names, variants, probe_at, model, base) -> list[common.WorkloadDraft]:
    """Every test and benchmark entry; a scaled `small` copy of the first test when no entry is
    small enough for npu-sim."""
    workloads = []
    for wid, spec in entries:
        axes = _entry_axes(spec, axes_names, variants)
        found = _shapes_at(model, axes, probe_at, base)
        derived = model.derived_axes(found)
        _check_shapes(model, {**axes, **derived}, found, wid)
        small = common.size(found) <= common.SMALL_ELEMENTS
        workloads.append(common.WorkloadDraft(wid, {**axes, **derived}, small, f"task.yml {wid}"))
    if any(w.small for w in workloads):
        return workloads
    first = dict(workloads[0].axes)
    small_axes = common.scale_down(first, axes_names, lambda a: common.size(probe_at(a)))
    if small_axes is not None:
        derived = model.derived_axes(probe_at(small_axes))
        workloads.append(
            common.WorkloadDraft(
                "small",
                {**small_axes, **derived},
                True,
                "scaled for npu-sim",
                scaled_from=workloads[0].id,
            )
        )
    return workloads


def _entry_axes(spec: dict[str, Any], axes_names: list[str], variants: list[dict]) -> dict:
    """A task.yml entry's axes (its `variant` too when there are several)."""
    axes = {k: spec[k] for k in axes_names}
    if len(variants) > 1:
        rest = {k: v for k, v in spec.items() if k not in axes_names and k != "seed"}
        axes[VARIANT] = variants.index(rest) + 1
    return axes


class _ShapeDrift(ValueError):
    """A workload's tensor shape does not follow the shape model."""


def _shapes_at(model, axes: dict[str, int], probe_at, base: probe.Probe) -> probe.Probe:
    """A workload's tensors: from the shape model and the first test's dtypes when every dim
    follows the axes (no need to run a benchmark-sized source), else probed."""
    if model.derived:
        return probe_at(axes)

    def resolve(specs, probed):
        return [
            (tuple(axes[d] if isinstance(d, str) else d for d in spec), dtype)
            for spec, (_, dtype) in zip(specs, probed)
        ]

    return probe.Probe(resolve(model.inputs, base.inputs), resolve(model.outputs, base.outputs), 0)


def _check_shapes(model, axes: dict[str, int], found: probe.Probe, wid: str) -> None:
    for specs, shapes in ((model.inputs, found.inputs), (model.outputs, found.outputs)):
        for spec, (shape, _) in zip(specs, shapes):
            resolved = tuple(axes[d] if isinstance(d, str) else d for d in spec)
            if resolved != shape:
                raise _ShapeDrift(f"{wid}: shape {shape} does not follow the axes ({spec})")


def _specs(
    shapes, probed, dtype: str, prefix: str, *, by_dtype: bool = False
) -> list[dict[str, Any]]:
    """problem.yaml tensor entries: `data0`, `data1`... (`data_float16`... when `by_dtype`)."""
    specs = []
    for i, (shape, (_, tensor_dtype)) in enumerate(zip(shapes, probed)):
        name = f"{prefix}{tensor_dtype}" if by_dtype else f"{prefix}{i}"
        spec: dict[str, Any] = {"name": name if by_dtype or len(probed) > 1 else prefix}
        spec["shape"] = list(shape)
        if tensor_dtype != dtype:
            spec["dtype"] = tensor_dtype
        specs.append(spec)
    return specs


_TEMPLATE = '''"""Imported from GPU MODE problem {folder} (files kept verbatim in {source}/).

The source's own check_implementation judges outputs (`check`); the source runs with CUDA
redirected to the evaluating device (device_neutral.py). Its data travels through the harness
as its tensors (structured.py): a submission's custom_kernel(data) receives data of the shape
GPU MODE gives it, rebuilt around them, non-tensor parts included.
"""

import importlib.util
import pathlib
import sys

import torch

AXES = {axes!r}
VARIANTS = {variants!r}  # generate_input's other parameters; axis `variant` n is VARIANTS[n - 1]
DATA = {kind!r}  # generate_input's data: "tensor", "tuple" (of tensors) or "structured"
_HERE = pathlib.Path(__file__).parent
_DIR = _HERE / "{source}"


{loader}


_device = _load(_HERE / "device_neutral.py")
_structured = _load(_HERE / "structured.py")
_source = _load(_DIR / "reference.py", _DIR)
# The structure of the data last made with these tensor shapes and dtypes: make_inputs records
# it, and the calls that follow in this process rebuild the data around their tensors.
_STRUCTURES = {{}}


def _signature(tensors):
    return tuple((tuple(t.shape), str(t.dtype)) for t in tensors)


def _data(inputs):
    if DATA == "tensor":
        return inputs[0]
    if DATA == "tuple":
        return tuple(inputs)
    return _structured.unflatten(_STRUCTURES[_signature(inputs)], list(inputs))


def make_inputs(axes, dtype, device, generator):
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator, device=device).item())
    spec = {{**VARIANTS[int(axes.get("variant", 1)) - 1], **{{k: int(axes[k]) for k in AXES}}}}
    # torch's global generator seeded too: sources that draw some tensors without their own
    # generator (trimul's weights) make the same data in the trusted process and the worker
    devices = [device] if torch.device(device).type == "cuda" else []
    with torch.random.fork_rng(devices=devices), _device.on(device):
        torch.manual_seed(seed)
        data = _source.generate_input(**spec, seed=seed)
    tensors, structure = _structured.flatten(data)
    tensors = tuple(t.to(device) for t in tensors)
    if DATA == "structured":
        _STRUCTURES[_signature(tensors)] = structure
    return tensors


def call_arguments(inputs):
    """custom_kernel's (and a native kernel's) one argument: the data, as GPU MODE gives it."""
    return [_data(inputs)]


def learn_structure(axes, dtype, device):
    """Record the data's structure for these axes in this process, from inputs made with a
    public seed: a worker is handed only the tensors (the trusted side makes the inputs)."""
    make_inputs(axes, dtype, device, torch.Generator(device=device).manual_seed(0))


if DATA != "structured":  # tensors are passed as they are
    del call_arguments, learn_structure


def reference(*inputs):
    with _device.on(inputs[0].device):
        return _source.ref_kernel(_data(inputs))


def _check(inputs, outputs):
    """The source's check_implementation on a submission's outputs: error messages, or []."""
    output = outputs[0] if len(outputs) == 1 else tuple(outputs)
    with _device.on(inputs[0].device):
        verdict = _source.check_implementation(_data(inputs), output)
    if isinstance(verdict, tuple):  # (good, message)
        return [] if verdict[0] else [str(verdict[1]) or "check_implementation failed"]
    if isinstance(verdict, bool):
        return [] if verdict else ["check_implementation failed"]
    return [str(verdict)] if verdict else []  # older checkers return a message, "" when good


# The trusted side judges with the source's checker when there is one.
check = _check if hasattr(_source, "check_implementation") else None
'''
