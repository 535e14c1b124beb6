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
order; a submission's `custom_kernel(data)` receives that tuple.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from farm.errors import SuiteError
from farm.suite.importers import common, device_neutral, probe
from farm.suite.importers.loading import load_module

SOURCE_DIR = "source"
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


def problem_draft(folder: Path, root: Path) -> common.ProblemDraft:
    task = _task(folder)
    helpers = _helpers(folder, root)
    module = load_module(folder / "reference.py", search=[h.parent for h in helpers])
    for needed in ("generate_input", "ref_kernel"):
        if not hasattr(module, needed):
            raise SuiteError(f"{folder.name}/reference.py: defines no `{needed}`")
    entries = _entries(task)
    axes_names, variants = _split_params(entries)

    def probe_at(axes: dict[str, int]) -> probe.Probe:
        return probe.fake_probe(lambda: _forward(module, _spec(axes, axes_names, variants)))

    first_axes = {k: entries[0][1][k] for k in axes_names}
    model = probe.shape_model(probe_at, first_axes)
    base = probe_at(first_axes)
    workloads = _workloads(entries, axes_names, variants, probe_at, model, base)
    name = common.problem_name(folder, root)
    dtype = next((d for _, d in base.inputs if d.startswith(("float", "bfloat"))), "float32")
    flops, note = common.flops_formula(lambda a: probe_at(a).flops, first_axes, axes_names)
    category = common.guess_category(name)
    extra: dict[str, Any] = {
        "imported_from": {"format": "gpumode", "folder": str(folder.relative_to(root))},
        "seeds": "task.yml seeds are not used: the harness draws its own (secret in leaderboard)",
    }
    if hasattr(module, "check_implementation"):
        extra["checker"] = "the source's check_implementation(data, output)"
    if note:
        extra["flops_note"] = note
    is_tuple = _data_is_tuple(module, _spec(first_axes, axes_names, variants))
    extra["gpumode_data"] = "tuple" if is_tuple else "tensor"
    written = _written_inputs(module, _spec(first_axes, axes_names, variants), base)
    if written:
        extra["writable_inputs"] = written
    files = {f"{SOURCE_DIR}/{p.name}": p.read_text() for p in sorted(folder.glob("*.py"))}
    files |= {f"{SOURCE_DIR}/{h.name}": h.read_text() for h in helpers}
    files[f"{SOURCE_DIR}/task.yml"] = (folder / "task.yml").read_text()
    files["device_neutral.py"] = Path(device_neutral.__file__).read_text()
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
            variants=variants,
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


def _split_params(entries) -> tuple[list[str], list[dict[str, Any]]]:  # type: ignore[no-untyped-def]
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


def _data_is_tuple(module: ModuleType, spec: dict[str, Any]) -> bool:
    def generate() -> Any:
        with device_neutral.on("cpu"):
            return module.generate_input(**spec, seed=0)

    return isinstance(probe.fake_or_real(generate), tuple | list)


def _written_inputs(module: ModuleType, spec: dict[str, Any], base: probe.Probe) -> list[int]:
    """Inputs the source's own ref_kernel writes (GPU MODE hands kernels destination buffers
    inside `data`): a submission may write them too. Found by running ref_kernel for real at
    the first test's sizes (skipped above WRITE_PROBE_ELEMENTS input elements)."""

    if common.elements(s for s, _ in base.inputs) > WRITE_PROBE_ELEMENTS:
        return []
    written = set(_changed(module, spec, poison=None))
    # A destination made by torch.empty may already hold the answer (memory reused from an
    # earlier call), so a call that writes it can leave it unchanged: each input not yet seen
    # written is filled with zeros and the call made again; a buffer the call overwrites
    # differs afterwards, a read-only input stays zero.
    count = len(_tensors(_generate(module, spec)))
    for i in range(count):
        if i not in written:
            written |= set(_changed(module, spec, poison=i))
    return sorted(written)


def _changed(module: ModuleType, spec: dict[str, Any], poison: int | None) -> list[int]:
    """Inputs that one real call of ref_kernel changed (input `poison` zero-filled first); none
    when the call fails (zeros are not valid data for every kernel)."""
    import torch

    with device_neutral.on("cpu"):
        data = _generate(module, spec)
        tensors = _tensors(data)
        if poison is not None and isinstance(tensors[poison], torch.Tensor):
            tensors[poison].zero_()
        before = [t.clone() if isinstance(t, torch.Tensor) else None for t in tensors]
        try:
            module.ref_kernel(data)
        except Exception:
            if poison is None:
                raise
            return []
    return [
        i
        for i, (a, b) in enumerate(zip(before, tensors))
        if a is not None and not torch.equal(a, b)
    ]


def _generate(module: ModuleType, spec: dict[str, Any]) -> Any:
    with device_neutral.on("cpu"):
        return module.generate_input(**spec, seed=0)


def _tensors(data: Any) -> list[Any]:
    return list(data) if isinstance(data, tuple | list) else [data]


WRITE_PROBE_ELEMENTS = 1 << 24


def _forward(module: ModuleType, spec: dict[str, Any]) -> tuple[Any, Any]:
    with device_neutral.on("cpu"):
        data = module.generate_input(**spec, seed=0)
        inputs = data if isinstance(data, tuple | list) else (data,)
        return inputs, module.ref_kernel(data)


def _workloads(entries, axes_names, variants, probe_at, model, base) -> list[common.WorkloadDraft]:  # type: ignore[no-untyped-def]
    """Every test and benchmark entry; a scaled `small` copy of the first test when no entry is
    small enough for npu-sim."""
    workloads = []
    for wid, spec in entries:
        axes = {k: spec[k] for k in axes_names}
        if len(variants) > 1:
            rest = {k: v for k, v in spec.items() if k not in axes_names and k != "seed"}
            axes[VARIANT] = variants.index(rest) + 1
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
            common.WorkloadDraft("small", {**small_axes, **derived}, True, "scaled for npu-sim")
        )
    return workloads


def _shapes_at(model, axes: dict[str, int], probe_at, base: probe.Probe) -> probe.Probe:  # type: ignore[no-untyped-def]
    """A workload's tensors: from the shape model and the first test's dtypes when every dim
    follows the axes (no need to run a benchmark-sized source), else probed."""
    if model.derived:
        return probe_at(axes)

    def resolve(specs, probed):  # type: ignore[no-untyped-def]
        return [
            (tuple(axes[d] if isinstance(d, str) else d for d in spec), dtype)
            for spec, (_, dtype) in zip(specs, probed)
        ]

    return probe.Probe(resolve(model.inputs, base.inputs), resolve(model.outputs, base.outputs), 0)


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


_TEMPLATE = '''"""Imported from GPU MODE problem {folder} (files kept verbatim in {source}/).

The source's own check_implementation judges outputs (`check`); the source runs with CUDA
redirected to the evaluating device (device_neutral.py).
"""

import importlib.util
import pathlib
import sys

import torch

AXES = {axes!r}
VARIANTS = {variants!r}  # generate_input's other parameters; axis `variant` n is VARIANTS[n - 1]
DATA_IS_TUPLE = {is_tuple!r}  # generate_input's data is a tuple (else one tensor)
_HERE = pathlib.Path(__file__).parent
_DIR = _HERE / "{source}"


def _load(path, folder=None):
    before = set(sys.modules)
    if folder:
        sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location(
            "gpumode_" + path.stem + "_" + str(abs(hash(__file__))), path
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if folder:
            sys.path.remove(str(folder))
            for name in set(sys.modules) - before:
                if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(folder)):
                    del sys.modules[name]
    return module


_device = _load(_HERE / "device_neutral.py")
_source = _load(_DIR / "reference.py", _DIR)


def _data(inputs):
    return tuple(inputs) if DATA_IS_TUPLE else inputs[0]


def make_inputs(axes, dtype, device, generator):
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator, device=device).item())
    spec = {{**VARIANTS[int(axes.get("variant", 1)) - 1], **{{k: int(axes[k]) for k in AXES}}}}
    with _device.on(device):
        data = _source.generate_input(**spec, seed=seed)
    tensors = data if isinstance(data, (tuple, list)) else (data,)
    return tuple(t.to(device) for t in tensors)


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
