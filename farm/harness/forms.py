"""Load a submission file and adapt its entry point to `call(inputs) -> outputs`.

Accepted forms:
- native: `kernel(*inputs)` returning a tensor or a tuple of tensors;
- KernelBench: `class ModelNew(nn.Module)` built with the problem's init inputs, called as
  `model(*inputs)`; weights are seeded identically to the reference's `Model`, the module's own
  copies of the problem's constants are set to the workload's values first, and the model stays
  in training mode, as KernelBench leaves it;
- GPU MODE: `custom_kernel(data)` where `data` is the tuple of inputs, the lone input, or (for
  structured data) what the problem's `call_arguments` rebuilds around the input tensors.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from farm.errors import SubmissionError

FORMS = ("native", "kernelbench", "gpumode")
MODULE_NAME = "submission"


@dataclass
class LoadedSubmission:
    form: str
    module: ModuleType
    call: Callable[[Sequence[Any]], Any]


def import_file(
    path: Path, name: str = MODULE_NAME, *, namespace: dict[str, Any] | None = None
) -> ModuleType:
    """Import a Python file as a fresh module whose globals start with `namespace` (what the
    file's own code defines replaces it); failing to import raises SubmissionError."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SubmissionError(f"{path.name}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(namespace or {})
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise SubmissionError(
            f"{path.name}:{exc.lineno}: syntax error: {exc.msg}", hint="fix the syntax and resubmit"
        ) from None
    except BaseException as exc:
        raise SubmissionError(
            f"{path.name}: importing it raised {type(exc).__name__}: {exc}",
            hint="the file must import cleanly; " + _last_frame(exc, path),
        ) from None
    return module


def load(
    path: Path,
    *,
    init_inputs: Callable[[], Sequence[Any]] | None = None,
    seed_weights: Callable[[], None] | None = None,
    device: Any = None,
    gpumode_data: str = "tuple",
    arguments: Callable[[Sequence[Any]], Sequence[Any]] | None = None,
    constants: dict[str, Any] | None = None,
    entry: Callable[[ModuleType], Callable[[Sequence[Any]], Any] | None] | None = None,
    namespace: dict[str, Any] | None = None,
) -> LoadedSubmission:
    """Import the submission at `path` and find its entry point.

    `arguments` turns the input tensors into the call's arguments (a problem with non-tensor
    arguments puts them back); `constants` are the problem's module constants for this
    workload, set on the submission's own copies (names it defines) before ModelNew is built;
    `entry(module)`, a problem's own submission format (a GPU MODE eval.py that calls a forward
    and a backward function), gives the call when the submission follows that format;
    `namespace` holds the names the file sees before its own (a KernelBench source's module,
    as KernelBench runs the source and the candidate in one namespace).
    """
    module = import_file(path, namespace=namespace)
    args = arguments or (lambda inputs: inputs)
    call = entry(module) if entry else None  # the problem's own submission format
    if call is not None:
        return LoadedSubmission("gpumode", module, call)
    if callable(getattr(module, "kernel", None)):
        fn = module.kernel
        return LoadedSubmission("native", module, lambda inputs: fn(*args(inputs)))
    if isinstance(getattr(module, "ModelNew", None), type):
        return kernelbench_model(
            module,
            init_inputs=init_inputs,
            seed_weights=seed_weights,
            device=device,
            arguments=arguments,
            constants=constants,
        )
    if callable(getattr(module, "custom_kernel", None)):
        fn = module.custom_kernel
        if gpumode_data == "tensor":  # GPU MODE passes a lone tensor when generate_input does
            return LoadedSubmission("gpumode", module, lambda inputs: fn(inputs[0]))
        if gpumode_data == "structured":  # the problem rebuilds the data around the tensors
            return LoadedSubmission("gpumode", module, lambda inputs: fn(*args(inputs)))
        return LoadedSubmission("gpumode", module, lambda inputs: fn(tuple(inputs)))
    raise SubmissionError(
        f"{path.name}: defines no `kernel` function",
        hint="define `kernel(*inputs)` returning the output (or KernelBench `ModelNew`, or "
        "GPU MODE `custom_kernel(data)`)",
    )


def kernelbench_model(
    module: ModuleType,
    *,
    init_inputs: Callable[[], Sequence[Any]] | None,
    seed_weights: Callable[[], None] | None,
    device: Any,
    arguments: Callable[[Sequence[Any]], Sequence[Any]] | None,
    constants: dict[str, Any] | None,
) -> LoadedSubmission:
    """An imported KernelBench file's ModelNew, built for one workload: the module's copies of
    the problem's constants set to its values first, the weights seeded as the reference's
    Model's. A workload with other axes needs one built for it (the worker builds one per
    axes, as the reference builds Model per axes). Raises SubmissionError when it cannot be
    built."""
    args = arguments or (lambda inputs: inputs)
    for name, value in (constants or {}).items():
        if hasattr(module, name):
            setattr(module, name, value)
    model = _kernelbench(module, init_inputs, seed_weights, device)
    return LoadedSubmission("kernelbench", module, lambda inputs: model(*args(inputs)))


def _kernelbench(module: ModuleType, init_inputs, seed_weights, device=None):
    args = list(init_inputs()) if init_inputs else []
    if seed_weights:
        seed_weights()
    try:
        model = module.ModelNew(*args)
    except BaseException as exc:
        raise SubmissionError(
            f"ModelNew({', '.join(type(a).__name__ for a in args)}) raised "
            f"{type(exc).__name__}: {exc}",
            hint="ModelNew must take the same constructor arguments as the problem's Model",
        ) from None
    if device is not None and hasattr(model, "to"):
        model = model.to(device)  # as KernelBench does with .cuda()
    return model


def _last_frame(exc: BaseException, path: Path) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    return f"see line {frames[-1].lineno}" if frames else "see the log"
