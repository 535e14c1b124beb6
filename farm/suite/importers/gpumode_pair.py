"""GPU MODE problems judged by their own eval.py through a forward and a backward function.

Such a problem (princeton/cross_entropy_py) has no generate_input / ref_kernel /
custom_kernel: reference.py defines `generate_inputs(batch_size, vocab_size, seed)`,
`reference_forward(...)`, `reference_backward(...)` and ATOL / RTOL, and eval.py fixes the batch
size (`B = ...`), imports the submission's two functions (named in its `load_submission`), checks
each output's shape and dtype and `torch.allclose(out, ref, atol=ATOL, rtol=RTOL)`, and ranks by
the median time of one forward plus one backward. The imported problem keeps all of that: its
call is forward then backward on one set of inputs (what eval.py ranks), its outputs are the two
results, and its checker is eval.py's. The batch size becomes an axis (eval.py's value on every
source workload) so that a small copy can exist for CPU and npu-sim.

What both GPU MODE layouts share lives here too (gpumode.py imports this module): the files kept
(`source_files`) and reference.py's loader of them (`SOURCE_LOADER`).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from types import ModuleType
from typing import Any

from farm.errors import SuiteError
from farm.suite.importers import common, device_neutral, probe

NEEDED = ("generate_inputs", "reference_forward", "reference_backward", "ATOL", "RTOL")
SOURCE_DIR = "source"
# `_load(path, folder=None)` of the reference.py the GPU MODE importers write: imports a file kept
# beside it; modules the file imports from `folder` (its utils.py) leave sys.modules afterwards,
# so that the next problem's `import utils` finds its own.
SOURCE_LOADER = """def _load(path, folder=None):
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
    return module"""


def applies(folder: Path, module: ModuleType) -> bool:
    return (folder / "eval.py").is_file() and all(hasattr(module, n) for n in NEEDED)


def problem_draft(
    folder: Path, root: Path, module: ModuleType, task: dict[str, Any], helpers: list[Path]
) -> common.ProblemDraft:
    entries, batch = _eval_facts(folder / "eval.py")
    names = list(inspect.signature(module.reference_backward).parameters)
    forward = list(inspect.signature(module.reference_forward).parameters)
    if not set(forward) <= set(names):
        raise SuiteError(f"{folder.name}: reference_forward takes inputs backward does not")
    rows = [dict(spec) for spec in task.get("tests") or []] + list(task.get("benchmarks") or [])
    if not rows or any(set(r) != {"vocab_size"} for r in rows):
        raise SuiteError(f"{folder.name}/task.yml: entries must each give vocab_size only")

    def probe_at(axes: dict[str, int]) -> probe.Probe:
        def run() -> tuple[Any, Any]:
            with device_neutral.on("cpu"):
                made = module.generate_inputs(axes["batch_size"], axes["vocab_size"], seed=0)
                args = dict(zip(names, made))
                loss = module.reference_forward(*[args[n] for n in forward])
                return made, (loss, module.reference_backward(*made))

        return probe.fake_probe(run)

    first = {"batch_size": batch, "vocab_size": int(rows[0]["vocab_size"])}
    model = probe.shape_model(probe_at, first)
    base = probe_at(first)
    workloads = _workloads(task, batch, probe_at)
    name = common.problem_name(folder, root)
    extra: dict[str, Any] = {
        "imported_from": {"format": "gpumode", "folder": str(folder.relative_to(root))},
        "checker": "the source's eval.py: shape, dtype and torch.allclose(atol=ATOL, rtol=RTOL) "
        "on the forward and the backward output",
        "submission": f"defines {entries[0]}({', '.join(forward)}) and "
        f"{entries[1]}({', '.join(names)}); one call runs both, as eval.py ranks them",
        "seeds": "the harness draws generate_inputs' seed (secret in leaderboard)",
    }
    files = source_files(folder, helpers)
    inputs = [_spec(n, s, d) for n, s, (_, d) in zip(names, model.inputs, base.inputs)]
    outputs = [
        _spec(n, s, d) for n, s, (_, d) in zip(("loss", "grad"), model.outputs, base.outputs)
    ]
    dtype = base.inputs[0][1]
    for spec in (*inputs, *outputs):
        if spec.get("dtype") == dtype:
            del spec["dtype"]
    return common.ProblemDraft(
        name=name,
        category=common.guess_category(name),
        description=" ".join(str(task.get("description") or folder.name).split())[:300],
        signature=f"{entries[0]}({', '.join(forward)}), {entries[1]}({', '.join(names)})",
        inputs=inputs,
        outputs=outputs,
        dtype=dtype,
        workloads=workloads,
        flops="0",
        compute_unit="vector",
        reference=_TEMPLATE.format(
            folder=folder.name,
            source=SOURCE_DIR,
            entries=tuple(entries),
            names=names,
            forward=forward,
            loader=SOURCE_LOADER,
        ),
        files=files,
        extra=extra,
    )


def source_files(folder: Path, helpers: list[Path]) -> dict[str, str]:
    """A GPU MODE problem's files as the imported problem keeps them (both layouts): its .py
    files, the `helpers` above it (utils.py) and task.yml verbatim under SOURCE_DIR, and
    device_neutral.py beside reference.py."""
    kept = [*sorted(folder.glob("*.py")), *helpers, folder / "task.yml"]
    files = {f"{SOURCE_DIR}/{p.name}": p.read_text() for p in kept}
    files["device_neutral.py"] = Path(device_neutral.__file__).read_text()
    return files


def _eval_facts(path: Path) -> tuple[list[str], int]:
    """(the submission's two function names, the batch size) as eval.py states them."""
    tree = ast.parse(path.read_text())
    batch, entries = None, None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["B"]:
            value = ast.literal_eval(node.value)
            batch = value if isinstance(value, int) else None
        if isinstance(node, ast.FunctionDef) and node.name == "load_submission":
            for loop in ast.walk(node):
                if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Tuple):
                    entries = [ast.literal_eval(e) for e in loop.iter.elts]
    if batch is None or not entries or len(entries) != 2:
        raise SuiteError(
            f"{path}: does not state the batch size (B = ...) and the two submission functions "
            "(load_submission's loop) the importer reads"
        )
    return [str(e) for e in entries], batch


def _workloads(task: dict[str, Any], batch: int, probe_at: Any) -> list[common.WorkloadDraft]:
    drafts = []
    for key, prefix in (("tests", "test"), ("benchmarks", "bench")):
        for i, row in enumerate(task.get(key) or []):
            axes = {"batch_size": batch, "vocab_size": int(row["vocab_size"])}
            small = common.size(probe_at(axes)) <= common.SMALL_ELEMENTS
            drafts.append(common.WorkloadDraft(f"{prefix}-{i}", axes, small, f"task.yml {key}"))
    if not any(w.small for w in drafts):
        count = lambda a: common.size(probe_at(a))  # noqa: E731
        scaled = common.scale_down(drafts[0].axes, ["batch_size", "vocab_size"], count)
        if scaled is not None:
            drafts.append(
                common.WorkloadDraft(
                    "small", scaled, True, "scaled for npu-sim", scaled_from=drafts[0].id
                )
            )
    return drafts


def _spec(name: str, shape: list[Any], dtype: str) -> dict[str, Any]:
    return {"name": name, "shape": list(shape), "dtype": dtype}


_TEMPLATE = '''"""Imported from GPU MODE problem {folder} (files kept verbatim in {source}/).

Judged as its own eval.py judges: the submission defines {entries[0]} and
{entries[1]}; one call runs both on one set of inputs (eval.py ranks their combined
time); each output must have the reference's shape and dtype and pass
torch.allclose(atol=ATOL, rtol=RTOL).
"""

import importlib.util
import pathlib
import sys

import torch

ENTRIES = {entries!r}
INPUTS = {names!r}  # generate_inputs' tensors, in the backward function's argument order
FORWARD = {forward!r}  # the forward function's arguments
_HERE = pathlib.Path(__file__).parent


{loader}


_device = _load(_HERE / "device_neutral.py")
_source = _load(_HERE / "{source}" / "reference.py", _HERE / "{source}")


def _pair(forward, backward, inputs):
    named = dict(zip(INPUTS, inputs))
    return forward(*[named[n] for n in FORWARD]), backward(*inputs)


def make_inputs(axes, dtype, device, generator):
    seed = int(torch.randint(1, 2**31 - 1, (1,), generator=generator, device=device).item())
    devices = [device] if torch.device(device).type == "cuda" else []
    with torch.random.fork_rng(devices=devices), _device.on(device):  # it reseeds torch's own
        made = _source.generate_inputs(int(axes["batch_size"]), int(axes["vocab_size"]), seed=seed)
    return tuple(t.to(device) for t in made)


def reference(*inputs):
    with _device.on(inputs[0].device):
        return _pair(_source.reference_forward, _source.reference_backward, inputs)


def submission_entry(module):
    """The submission's call, when it defines the two functions eval.py imports."""
    found = [getattr(module, name, None) for name in ENTRIES]
    if not all(callable(f) for f in found):
        return None
    return lambda inputs: _pair(found[0], found[1], list(inputs))


def check(inputs, outputs):
    """eval.py's checks on each output: shape, dtype, torch.allclose(atol=ATOL, rtol=RTOL)."""
    expected = reference(*inputs)
    found = []
    for name, out, ref in zip(ENTRIES, outputs, expected):
        if out.shape != ref.shape:
            found.append(f"{{name}}: shape mismatch: expected {{ref.shape}}, got {{out.shape}}")
        elif out.dtype != ref.dtype:
            found.append(f"{{name}}: dtype mismatch: expected {{ref.dtype}}, got {{out.dtype}}")
        elif not torch.allclose(out, ref, atol=_source.ATOL, rtol=_source.RTOL):
            err = (out.float() - ref.float()).abs().max().item()
            found.append(
                f"{{name}}: not allclose(atol={{_source.ATOL}}, rtol={{_source.RTOL}}); "
                f"max abs err {{err:.3g}}"
            )
    return found
'''
