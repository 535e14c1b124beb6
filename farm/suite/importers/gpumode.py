"""`farm suite import gpumode DIR`: GPU MODE problems (a folder with reference.py + task.yml) as
problems of our format.

`generate_input(**spec)` makes the data, `ref_kernel(data)` the expected output; task.yml's
`tests` and `benchmarks` entries are the workloads: their int parameters (all but `seed`) become
axes, other parameters must be the same in every entry. The source files are kept verbatim in
`source/` (with the nearest `utils.py` above them); `reference.py` draws a `seed` for
`generate_input` from the harness's generator. Data that is a tuple of tensors is passed as the
inputs in order; a submission's `custom_kernel(data)` receives that tuple.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from farm.errors import SuiteError
from farm.suite.importers import common, probe
from farm.suite.importers.loading import load_module

SOURCE_DIR = "source"


def find_problems(root: Path) -> list[Path]:
    """Problem folders under `root`: those holding both task.yml and reference.py."""
    return sorted(p.parent for p in root.rglob("task.yml") if (p.parent / "reference.py").is_file())


def import_dir(root: Path) -> tuple[list[common.ProblemDraft], list[str]]:
    empty = SuiteError(
        f"{root}: no GPU MODE problems (folders with task.yml and reference.py)",
        hint="pass the folder holding the problem folders",
    )
    return common.draft_all(find_problems(root), root, problem_draft, empty=empty)


def problem_draft(folder: Path, root: Path) -> common.ProblemDraft:
    task = _task(folder)
    helpers = _helpers(folder, root)
    module = load_module(folder / "reference.py", search=[h.parent for h in helpers])
    for needed in ("generate_input", "ref_kernel"):
        if not hasattr(module, needed):
            raise SuiteError(f"{folder.name}/reference.py: defines no `{needed}`")
    entries = _entries(task)
    axes_names, constants = _split_params(entries, folder.name)

    def probe_at(axes: dict[str, int]) -> probe.Probe:
        return probe.fake_probe(lambda: _forward(module, {**constants, **axes}))

    first_axes = {k: entries[0][1][k] for k in axes_names}
    model = probe.shape_model(probe_at, first_axes)
    base = probe_at(first_axes)
    workloads = _workloads(entries, axes_names, probe_at, model)
    name = common.problem_name(folder, root)
    dtype = next((d for _, d in base.inputs if d.startswith(("float", "bfloat"))), "float32")
    flops, note = common.flops_formula(lambda a: probe_at(a).flops, first_axes, axes_names)
    category = common.guess_category(name)
    extra: dict[str, Any] = {
        "imported_from": {"format": "gpumode", "folder": str(folder.relative_to(root))},
        "seeds": "task.yml seeds are not used: the harness draws its own (secret in leaderboard)",
    }
    if note:
        extra["flops_note"] = note
    is_tuple = _data_is_tuple(module, {**constants, **first_axes})
    extra["gpumode_data"] = "tuple" if is_tuple else "tensor"
    files = {f"{SOURCE_DIR}/{p.name}": p.read_text() for p in sorted(folder.glob("*.py"))}
    files |= {f"{SOURCE_DIR}/{h.name}": h.read_text() for h in helpers}
    files[f"{SOURCE_DIR}/task.yml"] = (folder / "task.yml").read_text()
    inputs = _specs(model.inputs, base.inputs, dtype, "data")
    return common.ProblemDraft(
        name=name,
        category=category,
        description=" ".join(str(task.get("description") or f"GPU MODE {folder.name}").split())[
            :300
        ],
        signature=f"ref_kernel(({', '.join(s['name'] for s in inputs)},))",
        inputs=inputs,
        outputs=_specs(model.outputs, base.outputs, dtype, "out"),
        dtype=dtype,
        workloads=workloads,
        flops=flops,
        compute_unit=common.compute_unit(category),
        reference=_TEMPLATE.format(
            folder=folder.name,
            axes=axes_names,
            constants=constants,
            source=SOURCE_DIR,
            is_tuple=is_tuple,
        ),
        files=files,
        extra=extra,
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


def _split_params(entries, folder: str) -> tuple[list[str], dict[str, Any]]:  # type: ignore[no-untyped-def]
    """Axis names (int parameters) and parameters that are the same everywhere."""
    keys = set(entries[0][1]) - {"seed"}
    axes = sorted(k for k in keys if all(type(s.get(k)) is int for _, s in entries))
    constants: dict[str, Any] = {}
    for key in sorted(keys - set(axes)):
        values = {repr(s.get(key)) for _, s in entries}
        if len(values) > 1:
            raise SuiteError(
                f"{folder}: parameter '{key}' varies between entries and is not an int",
                hint="only int parameters can vary across workloads",
            )
        constants[key] = entries[0][1][key]
    return axes, constants


def _data_is_tuple(module: ModuleType, spec: dict[str, Any]) -> bool:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(allow_non_fake_inputs=True):
        return isinstance(module.generate_input(**spec, seed=0), tuple | list)


def _forward(module: ModuleType, spec: dict[str, Any]) -> tuple[Any, Any]:
    data = module.generate_input(**spec, seed=0)
    inputs = data if isinstance(data, tuple | list) else (data,)
    return inputs, module.ref_kernel(data)


def _workloads(entries, axes_names, probe_at, model) -> list[common.WorkloadDraft]:  # type: ignore[no-untyped-def]
    workloads = []
    for wid, spec in entries:
        axes = {k: spec[k] for k in axes_names}
        found = probe_at(axes)
        derived = model.derived_axes(found)
        _check_shapes(model, {**axes, **derived}, found, wid)
        small = common.elements(s for s, _ in found.inputs) <= common.SMALL_ELEMENTS
        workloads.append(common.WorkloadDraft(wid, {**axes, **derived}, small, f"task.yml {wid}"))
    if any(w.small for w in workloads):
        return workloads
    first = {k: entries[0][1][k] for k in axes_names}
    small_axes = common.scale_down(
        first, axes_names, lambda a: common.elements(s for s, _ in probe_at(a).inputs)
    )
    if small_axes is not None:
        derived = model.derived_axes(probe_at(small_axes))
        workloads.append(
            common.WorkloadDraft("small", {**small_axes, **derived}, True, "scaled for npu-sim")
        )
    return workloads


def _check_shapes(model, axes: dict[str, int], found: probe.Probe, wid: str) -> None:  # type: ignore[no-untyped-def]
    for specs, shapes in ((model.inputs, found.inputs), (model.outputs, found.outputs)):
        for spec, (shape, _) in zip(specs, shapes):
            resolved = tuple(axes[d] if isinstance(d, str) else d for d in spec)
            if resolved != shape:
                raise ValueError(f"{wid}: shape {shape} does not follow the axes ({spec})")


def _specs(shapes, probed, dtype: str, prefix: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    specs = []
    for i, (shape, (_, tensor_dtype)) in enumerate(zip(shapes, probed)):
        spec: dict[str, Any] = {"name": f"{prefix}{i}" if len(probed) > 1 else prefix}
        spec["shape"] = list(shape)
        if tensor_dtype != dtype:
            spec["dtype"] = tensor_dtype
        specs.append(spec)
    return specs


_TEMPLATE = '''"""Imported from GPU MODE problem {folder} (files kept verbatim in {source}/)."""

import importlib.util
import pathlib
import sys

import torch

AXES = {axes!r}
CONSTANTS = {constants!r}
DATA_IS_TUPLE = {is_tuple!r}  # generate_input's data is a tuple (else one tensor)
_DIR = pathlib.Path(__file__).with_name("{source}")


def _load():
    before = set(sys.modules)
    sys.path.insert(0, str(_DIR))
    try:
        spec = importlib.util.spec_from_file_location(
            "gpumode_reference_" + str(abs(hash(__file__))), _DIR / "reference.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(_DIR))
        for name in set(sys.modules) - before:
            if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(_DIR)):
                del sys.modules[name]
    return module


_source = _load()


def make_inputs(axes, dtype, device, generator):
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator, device=device).item())
    spec = {{**CONSTANTS, **{{k: int(axes[k]) for k in AXES}}}}
    data = _source.generate_input(**spec, seed=seed)
    tensors = data if isinstance(data, (tuple, list)) else (data,)
    return tuple(t.to(device) for t in tensors)


def reference(*inputs):
    data = tuple(inputs) if DATA_IS_TUPLE else inputs[0]
    return _source.ref_kernel(data)
'''
