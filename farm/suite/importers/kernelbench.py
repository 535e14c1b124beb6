"""`farm suite import kernelbench DIR`: KernelBench problem files (Model, get_inputs,
get_init_inputs) as problems of our format.

Each file becomes a problem named after its stem, prefixed with its folder below DIR
(`level1-23_Softmax`). The file is kept verbatim as `source.py`; `reference.py` sets the file's
module-level int constants from the workload's axes, builds `Model` after seeding torch with
WEIGHT_SEED (as the harness seeds it before building `ModelNew`), and draws inputs from
`get_inputs()` under a seed taken from the harness's generator.

KernelBench's semantics are kept: models stay in training mode (KernelBench never calls
`.eval()`, so BatchNorm normalises with the batch's statistics), non-tensor arguments of
`get_inputs()` (a Python float) are passed to Model and ModelNew as they are, the reference runs
under PyTorch's default numerics as KernelBench runs both models (cuDNN may use TF32 for
convolutions, where the farm's own references turn TF32 off), and the tolerance is KernelBench's
(`get_tolerance_for_precision`, src/kernelbench/eval.py: 1e-4 for float32, 1e-2 for 16-bit
types, as atol and rtol). KernelBench runs the source and the candidate in one namespace, so
reference.py's `submission_namespace` hands the source's module-level names to the candidate's
module (in the sandboxed worker); and it compares only the returned outputs, so the inputs
Model writes in place are `extra.writable_inputs` (docs/formats.md states both rules).

One deliberate difference: a Model whose forward draws random numbers (dropout) is called with
torch's generators seeded alike for the reference's call and ModelNew's, so a candidate that draws
the same numbers the same way passes. KernelBench calls ModelNew right after Model without
re-seeding, so no candidate of such a problem can match there (its own Model included); the
problem says so in `extra.stochastic`.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from farm.errors import SuiteError
from farm.suite.importers import common, hf_offline, probe
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
    text = path.read_text()
    hf_configs = _offline_transformers() if hf_offline.uses_transformers(text) else None
    module = load_module(path)
    for needed in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, needed):
            raise SuiteError(f"{path.name}: defines no `{needed}`")
    constants = {
        k: v for k, v in vars(module).items() if type(v) is int and not k.startswith("_") and v > 0
    }
    probed = probe.memoised(lambda at: probe.fake_probe(lambda: _forward(module, at)))

    def probe_at(axes: dict[str, int]) -> probe.Probe:
        return probed({**constants, **axes})

    base = probe_at(constants)
    axes = {k: v for k, v in constants.items() if _moves(probe_at, constants, k, base)}
    model = probe.shape_model(probe_at, axes)
    name = common.problem_name(path, root)
    dtype = next((d for _, d in base.inputs if d.startswith(("float", "bfloat"))), "float32")
    flops, note = common.flops_formula(lambda a: probe_at(a).flops, axes, list(axes))
    workloads, not_small, state = _workloads(probe_at, axes, model, path.name)
    category = common.guess_category(name.split("-")[-1])
    inputs = _specs(model.inputs, base.inputs, dtype, "x")
    outputs = _specs(model.outputs, base.outputs, dtype, "out")
    scalars = _scalar_arguments(module)
    extra: dict[str, Any] = {
        "imported_from": {"format": "kernelbench", "file": str(path.relative_to(root))},
        "weight_seed": WEIGHT_SEED,
        "module_mode": "train",
    }
    stochastic = draws_random(text)
    if stochastic:
        extra["stochastic"] = STOCHASTIC_NOTE
    if scalars:
        extra["scalar_arguments"] = {str(i): v for i, v in scalars.items()}
    written = probe.fake_or_real(lambda: written_inputs(module, constants))
    if written:
        extra["writable_inputs"] = written  # judged by the outputs alone, as KernelBench does
    if any(state.values()):
        extra["state_bytes"] = state  # the weights count toward the worker's memory limits
    if not_small:
        extra["not_small"] = not_small
    if hf_configs is not None:
        extra["hf_models"] = HF_NOTE
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
        reference=reference_text(path, axes, model.inputs, scalars, stochastic=stochastic),
        files={"source.py": text, **_hf_files(hf_configs)},
        extra=extra,
        tolerance=TOLERANCE,
    )


def _offline_transformers() -> dict[str, dict[str, Any]]:
    """Level 4's Hugging Face models, built from their configs (hf_offline.py); the configs the
    source reads are filled in as it runs. SuiteError when transformers is not installed."""
    if importlib.util.find_spec("transformers") is None:
        raise SuiteError(
            "No module named 'transformers': KernelBench level 4 builds Hugging Face models; "
            f"install the farm with its {hf_offline.EXTRA} extra "
            f"(pip install 'kernel-farm[{hf_offline.EXTRA}]'), then import again"
        )
    read = hf_offline.install()
    import transformers

    transformers.logging.set_verbosity_error()  # one advice line per probe otherwise
    return read


def _hf_files(configs: dict[str, dict[str, Any]] | None) -> dict[str, str]:
    """The files a problem needs to build its Hugging Face models offline (none without)."""
    if configs is None:
        return {}
    shim = Path(hf_offline.__file__).read_text()
    return {"hf_offline.py": shim, hf_offline.CONFIGS_FILE: hf_offline.configs_text(configs)}


HF_NOTE = (
    f"Hugging Face models are built from their configs ({hf_offline.CONFIGS_FILE}) with weights "
    "drawn under the weight seed, not loaded from the checkpoint: nothing is downloaded"
)


# KernelBench's get_tolerance_for_precision (src/kernelbench/eval.py): atol = rtol.
TOLERANCE = {
    "float32": {"atol": 1e-4, "rtol": 1e-4},
    "float16": {"atol": 1e-2, "rtol": 1e-2},
    "bfloat16": {"atol": 1e-2, "rtol": 1e-2},
}


STOCHASTIC_NOTE = (
    "the forward draws random numbers: the farm seeds torch alike before the reference's call and "
    "ModelNew's, so drawing them as the reference does passes; KernelBench does not re-seed "
    "between the two calls, so there no candidate matches (deliberately more lenient)"
)
# What draws from torch's generators in a forward pass: training-mode dropout and RReLU (as
# modules built in __init__ or as functions), and the tensor samplers called outside __init__
# (where they only initialise parameters, which the weight seed already fixes).
_RANDOM_MODULE = re.compile(r"\b(\w*[Dd]ropout\w*|[Rr][Rr]e[Ll][Uu]|rrelu_?)\b")
_SAMPLER = re.compile(
    r"\b(rand|randn|randint|rand_like|randn_like|randint_like|randperm|bernoulli_?|multinomial|"
    r"normal_?|uniform_|exponential_|geometric_|cauchy_|log_normal_|random_)\s*\("
)


def draws_random(text: str) -> bool:
    """Whether the source's `Model` draws random numbers when it is called."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if model is None:
        return False
    for node in model.body:
        segment = ast.get_source_segment(text, node) or ""
        if _RANDOM_MODULE.search(segment):
            return True
        called = isinstance(node, ast.FunctionDef) and node.name != "__init__"
        if called and _SAMPLER.search(segment):
            return True
    return False


def _forward(module: ModuleType, axes: dict[str, int]) -> tuple[Any, Any, Any]:
    for k, v in axes.items():
        setattr(module, k, v)
    inputs = module.get_inputs()
    model = module.Model(*module.get_init_inputs())
    tensors = [t for t in inputs if not _is_scalar(t)]
    return tensors, model(*inputs), model


def written_inputs(module: ModuleType, axes: dict[str, int]) -> list[int]:
    """The tensor inputs (their indices among the problem's inputs) that Model's forward writes
    in place: their version counters move (a view's moves its base's)."""
    for k, v in axes.items():
        setattr(module, k, v)
    inputs = module.get_inputs()
    tensors = [t for t in inputs if not _is_scalar(t)]
    model = module.Model(*module.get_init_inputs())
    before = [t._version for t in tensors]
    model(*inputs)
    return [i for i, (t, v) in enumerate(zip(tensors, before)) if t._version != v]


def _is_scalar(value: Any) -> bool:
    return type(value) in (int, float, bool)


def _scalar_arguments(module: ModuleType) -> dict[int, int | float | bool]:
    """Positions and values of get_inputs()'s Python scalars (KernelBench passes them as they
    are); they must not depend on the random draw."""
    import torch

    with probe.fake_mode():
        first = [(i, v) for i, v in enumerate(module.get_inputs()) if _is_scalar(v)]
        torch.manual_seed(1)
        again = [(i, v) for i, v in enumerate(module.get_inputs()) if _is_scalar(v)]
    if first != again:
        raise ValueError("get_inputs() returns Python scalars that change with the seed")
    return dict(first)


def _moves(probe_at, constants: dict[str, int], name: str, base: probe.Probe) -> bool:
    """Whether doubling constant `name` changes the inputs, outputs or the model's size."""
    try:
        moved = probe_at({**constants, name: constants[name] * 2})
    except Exception:
        return False
    return (moved.inputs, moved.outputs, moved.state) != (base.inputs, base.outputs, base.state)


def _workloads(probe_at, axes, model, filename):
    """The source's shapes, plus a scaled `small` copy when they exceed the npu-sim rule; why
    there is no small workload, when none could be made; and the bytes of the model's weights
    on each workload (counted at float32 width: Model is built in float32, as KernelBench
    builds it)."""

    def weights(a: dict[str, int]) -> int:
        return 4 * probe_at(a).state

    def size(a: dict[str, int]) -> int:
        return common.size(probe_at(a))

    source = common.WorkloadDraft(
        id="source", axes={**axes, **model.derived_axes(probe_at(axes))}, source=filename
    )
    state = {"source": weights(axes)}
    if size(axes) <= common.SMALL_ELEMENTS:
        source.small = True
        return [source], None, state
    small_axes = common.scale_down(axes, list(axes), size)
    if small_axes is None:
        return [source], common.not_small_reason(probe_at(axes)), state
    small = common.WorkloadDraft(
        id="small",
        axes={**small_axes, **model.derived_axes(probe_at(small_axes))},
        small=True,
        source=f"{filename} scaled to the npu-sim size rule",
        scaled_from=source.id,
    )
    return [source, small], None, {**state, "small": weights(small_axes)}


def _specs(shapes, probed, dtype: str, prefix: str) -> list[dict[str, Any]]:
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


def reference_text(
    path: Path,
    axes: dict[str, int],
    input_shapes: list[list[str | int]],
    scalars: dict[int, int | float | bool] | None = None,
    *,
    stochastic: bool = False,
) -> str:
    """The generated reference.py (self-contained: it imports only torch and source.py)."""
    locate = [
        (i, j, dim)
        for i, shape in enumerate(input_shapes)
        for j, dim in enumerate(shape)
        if dim in axes
    ]
    return _TEMPLATE.format(
        file=path.name,
        axes=sorted(axes),
        locate=locate,
        seed=WEIGHT_SEED,
        scalars=scalars or {},
        stochastic=stochastic,
    )


_TEMPLATE = '''"""Imported from KernelBench file {file} (kept verbatim in source.py).

The workload's axes set the file's module constants; Model is built right after
torch.manual_seed(WEIGHT_SEED), as the harness builds ModelNew, so equal parameters follow.
As in KernelBench, the model stays in training mode (BatchNorm uses the batch's statistics),
get_inputs()'s Python scalars are passed as they are (SCALARS: position -> value), and the
reference runs under PyTorch's default numerics (cuDNN may use TF32 for convolutions), as
KernelBench runs Model and ModelNew. When Model draws random numbers (STOCHASTIC), every call
seeds torch with CALL_SEED first, the reference's and ModelNew's alike.
"""

import importlib.util
import pathlib

import torch

AXES = {axes!r}
AXIS_DIMS = {locate!r}  # (tensor input index, dim, axis): the axes read back from the inputs
WEIGHT_SEED = {seed}
SCALARS = {scalars!r}
STOCHASTIC = {stochastic!r}
CALL_SEED = 1

_HERE = pathlib.Path(__file__).parent
if (_HERE / "hf_offline.py").exists():  # level 4: Hugging Face models built from kept configs
    _hf_spec = importlib.util.spec_from_file_location(
        "kernelbench_hf_offline_" + str(abs(hash(__file__))), _HERE / "hf_offline.py"
    )
    _hf = importlib.util.module_from_spec(_hf_spec)
    _hf_spec.loader.exec_module(_hf)
    _hf.install_from(_HERE)
_spec = importlib.util.spec_from_file_location(
    "kernelbench_source_" + str(abs(hash(__file__))), _HERE / "source.py"
)
_source = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_source)
_models = {{}}


def module_constants(axes):
    """The source's module constants for these axes (a submission's copies are set alike)."""
    return {{name: int(axes[name]) for name in AXES if name in axes}}


def _configure(axes):
    for name, value in module_constants(axes).items():
        setattr(_source, name, value)


def init_inputs(axes):
    """Constructor arguments of Model (and of a submission's ModelNew) for these axes."""
    _configure(axes)
    return list(_source.get_init_inputs())


def submission_namespace(axes):
    """The names a ModelNew file sees before its own code runs: KernelBench execs the source and
    then the candidate in one namespace, so the source's module-level names (its constants at
    these axes, its helpers and imports, Model) are visible to ModelNew; the file's own
    definitions replace them."""
    _configure(axes)
    return {{name: value for name, value in vars(_source).items() if not name.startswith("__")}}


def call_arguments(tensors):
    """The forward's arguments: the tensor inputs with get_inputs()'s scalars put back (and,
    for a Model that draws random numbers, torch seeded for the call)."""
    if STOCHASTIC:
        torch.manual_seed(CALL_SEED)
    args, rest = [], list(tensors)
    for position in range(len(rest) + len(SCALARS)):
        args.append(SCALARS[position] if position in SCALARS else rest.pop(0))
    return args


def _model(axes, device):
    key = (tuple(sorted(axes.items())), str(device))
    if key not in _models:
        args = init_inputs(axes)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(WEIGHT_SEED)
            model = _source.Model(*args)
        _models[key] = model.to(device)  # training mode, as KernelBench leaves it
    return _models[key]


def reference(*inputs):
    axes = {{axis: int(inputs[i].shape[j]) for i, j, axis in AXIS_DIMS}}
    # PyTorch's default cuDNN flags, under which KernelBench runs both models: TF32 allowed for
    # float32 convolutions (the harness turns it off around references that do not say)
    with torch.no_grad(), torch.backends.cudnn.flags(enabled=True, allow_tf32=True):
        return _model(axes, inputs[0].device)(*call_arguments(inputs))


def make_inputs(axes, dtype, device, generator):
    _configure(axes)
    seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=device).item())
    device = torch.device(device)
    # made on the device itself (its default device for the call), from its own RNG stream
    forked = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=forked, device_type=device.type), device:
        torch.manual_seed(seed)
        made = [t for t in _source.get_inputs() if isinstance(t, torch.Tensor)]
    return tuple(
        t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device) for t in made
    )
'''
