"""`farm suite import kernelbench DIR`: KernelBench problem files (Model, get_inputs,
get_init_inputs) as problems of our format.

Each file becomes a problem named after its stem, prefixed with its folder below DIR
(`level1-23_Softmax`). The file is kept verbatim as `source.py`; `reference.py` sets the file's
module-level int constants from the workload's axes, builds `Model` after seeding torch with
WEIGHT_SEED (as the harness seeds it before building `ModelNew`), and draws inputs from
`get_inputs()` under a seed taken from the harness's generator.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from farm.errors import SuiteError
from farm.suite.importers import common, probe
from farm.suite.importers.loading import load_module

WEIGHT_SEED = 0  # the harness seeds ModelNew with the run's weight_seed, 0 unless sent


def find_files(root: Path) -> list[Path]:
    """Problem files under `root`: Python files that define Model and get_inputs."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name.startswith("_"):
            continue
        text = path.read_text(errors="replace")
        if "class Model" in text and "def get_inputs" in text:
            found.append(path)
    return found


def import_dir(root: Path) -> tuple[list[common.ProblemDraft], list[str]]:
    """Drafts of every problem under `root`, and a message per file that could not be used."""
    empty = SuiteError(
        f"{root}: no KernelBench problem files (with `class Model` and `get_inputs`)",
        hint="pass the KernelBench folder holding level1/, level2/, ... or the .py files",
    )
    return common.draft_all(find_files(root), root, problem_draft, empty=empty)


def problem_draft(path: Path, root: Path) -> common.ProblemDraft:
    module = load_module(path)
    for needed in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, needed):
            raise SuiteError(f"{path.name}: defines no `{needed}`")
    constants = {
        k: v for k, v in vars(module).items() if type(v) is int and not k.startswith("_") and v > 0
    }

    def probe_at(axes: dict[str, int]) -> probe.Probe:
        return probe.fake_probe(lambda: _forward(module, {**constants, **axes}))

    base = probe_at(constants)
    axes = {k: v for k, v in constants.items() if _moves_inputs(probe_at, constants, k, base)}
    model = probe.shape_model(probe_at, axes)
    name = common.problem_name(path, root)
    dtype = next((d for _, d in base.inputs if d.startswith(("float", "bfloat"))), "float32")
    flops, note = common.flops_formula(lambda a: probe_at(a).flops, axes, list(axes))
    workloads = _workloads(probe_at, axes, model, path.name)
    category = common.guess_category(name.split("-")[-1])
    inputs = _specs(model.inputs, base.inputs, dtype, "x")
    outputs = _specs(model.outputs, base.outputs, dtype, "out")
    extra: dict[str, Any] = {
        "imported_from": {"format": "kernelbench", "file": str(path.relative_to(root))},
        "weight_seed": WEIGHT_SEED,
    }
    if note:
        extra["flops_note"] = note
    return common.ProblemDraft(
        name=name,
        category=category,
        description=_doc(module) or f"KernelBench problem {path.stem}.",
        signature=f"Model(*get_init_inputs())({', '.join(s['name'] for s in inputs)})",
        inputs=inputs,
        outputs=outputs,
        dtype=dtype,
        workloads=workloads,
        flops=flops,
        compute_unit=common.compute_unit(category),
        reference=reference_text(path, axes, model.inputs),
        files={"source.py": path.read_text()},
        extra=extra,
    )


def _forward(module: ModuleType, axes: dict[str, int]) -> tuple[Any, Any]:
    for k, v in axes.items():
        setattr(module, k, v)
    inputs = module.get_inputs()
    model = module.Model(*module.get_init_inputs())
    return inputs, model(*inputs)


def _moves_inputs(probe_at, constants: dict[str, int], name: str, base: probe.Probe) -> bool:  # type: ignore[no-untyped-def]
    try:
        moved = probe_at({**constants, name: constants[name] * 2})
    except Exception:
        return False
    return moved.inputs != base.inputs


def _workloads(probe_at, axes, model, filename):  # type: ignore[no-untyped-def]
    """The source's shapes, plus a scaled `small` copy when they exceed the npu-sim limit."""

    def count(a: dict[str, int]) -> int:
        return common.elements(s for s, _ in probe_at(a).inputs)

    source = common.WorkloadDraft(
        id="source", axes={**axes, **model.derived_axes(probe_at(axes))}, source=filename
    )
    if count(axes) <= common.SMALL_ELEMENTS:
        source.small = True
        return [source]
    small_axes = common.scale_down(axes, list(axes), count)
    if small_axes is None:
        return [source]
    small = common.WorkloadDraft(
        id="small",
        axes={**small_axes, **model.derived_axes(probe_at(small_axes))},
        small=True,
        source=f"{filename} scaled to <= {common.SMALL_ELEMENTS} input elements",
    )
    return [source, small]


def _specs(shapes, probed, dtype: str, prefix: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    specs = []
    for i, (shape, (_, tensor_dtype)) in enumerate(zip(shapes, probed)):
        spec: dict[str, Any] = {"name": f"{prefix}{i}" if len(probed) > 1 else prefix}
        spec["shape"] = list(shape)
        if tensor_dtype != dtype:
            spec["dtype"] = tensor_dtype
        specs.append(spec)
    return specs


def _doc(module: ModuleType) -> str:
    doc = (module.Model.__doc__ or module.__doc__ or "").strip()
    return " ".join(doc.split())[:300]


def reference_text(path: Path, axes: dict[str, int], input_shapes: list[list[str | int]]) -> str:
    """The generated reference.py (self-contained: it imports only torch and source.py)."""
    locate = [
        (i, j, dim)
        for i, shape in enumerate(input_shapes)
        for j, dim in enumerate(shape)
        if dim in axes
    ]
    return _TEMPLATE.format(file=path.name, axes=sorted(axes), locate=locate, seed=WEIGHT_SEED)


_TEMPLATE = '''"""Imported from KernelBench file {file} (kept verbatim in source.py).

The workload's axes set the file's module constants; Model is built right after
torch.manual_seed(WEIGHT_SEED), as the harness builds ModelNew, so equal parameters follow.
"""

import importlib.util
import pathlib

import torch

AXES = {axes!r}
AXIS_DIMS = {locate!r}  # (input index, dim, axis): the axes read back from the inputs
WEIGHT_SEED = {seed}

_spec = importlib.util.spec_from_file_location(
    "kernelbench_source_" + str(abs(hash(__file__))), pathlib.Path(__file__).with_name("source.py")
)
_source = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_source)
_models = {{}}


def _configure(axes):
    for name in AXES:
        if name in axes:
            setattr(_source, name, int(axes[name]))


def init_inputs(axes):
    """Constructor arguments of Model (and of a submission's ModelNew) for these axes."""
    _configure(axes)
    return list(_source.get_init_inputs())


def _model(axes, device):
    key = (tuple(sorted(axes.items())), str(device))
    if key not in _models:
        args = init_inputs(axes)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(WEIGHT_SEED)
            model = _source.Model(*args)
        _models[key] = model.to(device).eval()
    return _models[key]


def reference(*inputs):
    axes = {{axis: int(inputs[i].shape[j]) for i, j, axis in AXIS_DIMS}}
    with torch.no_grad():
        return _model(axes, inputs[0].device)(*inputs)


def make_inputs(axes, dtype, device, generator):
    _configure(axes)
    seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=device).item())
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        made = _source.get_inputs()
    return tuple(
        t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device) for t in made
    )
'''
