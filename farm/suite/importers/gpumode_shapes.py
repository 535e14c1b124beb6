"""Shapes of a GPU MODE problem's data, found by running its source (gpumode.py's helper).

The data `generate_input` makes is flattened into its tensors (structured.py); `ref_kernel`'s
output must be a tensor or a flat tuple/list/dict of tensors. Shapes come from probes under
FakeTensorMode (probe.py). A source whose output shapes depend on its data is run for real: on
the GPU when this host has one, on the CPU only up to REAL_PROBE_ELEMENTS input elements.

When the number of tensors changes with the axes (a dict of per-expert weights, a list of
groups) or the source refuses a doubled axis, the problem's tensors are described per dtype
(`collapsed`): one 1-D input and output per dtype whose length, the elements of that dtype, each
workload carries as a derived axis, so that byte counts stay exact.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from types import ModuleType
from typing import Any

from farm.suite.importers import common, device_neutral, probe, structured

REAL_PROBE_ELEMENTS = 1 << 24  # the largest source run for real on a CPU while importing
COLLAPSED_NOTE = (
    "the number of tensors in the data changes with the workload: inputs and outputs are "
    "listed per dtype, each as the total elements of that dtype (exact byte counts)"
)

Spec = Callable[[dict[str, int]], dict[str, Any]]


def model(
    spec_of: Spec, axes: dict[str, int], module: ModuleType
) -> tuple[Callable[[dict[str, int]], probe.Probe], probe.ShapeModel]:
    """(probe_at, shape model): per tensor when the tensors follow the axes, else collapsed
    per dtype with every dim a derived axis. Each axis point is probed once, however often it
    is asked for (probe.memoised)."""

    @probe.memoised
    def probe_at(at: dict[str, int]) -> probe.Probe:
        spec = spec_of(at)
        return probe.fake_probe(
            lambda: forward(module, spec, "cpu"), real=lambda: forward_real(module, spec)
        )

    try:
        return probe_at, probe.shape_model(probe_at, axes)
    except Exception:  # tensors that come and go with the axes, or a refused doubled axis
        pass

    def collapsed_at(at: dict[str, int]) -> probe.Probe:
        return _collapse(probe_at(at))

    return collapsed_at, _derived(collapsed_at(axes))


def loosened(
    model: probe.ShapeModel, found: list[tuple[dict[str, int], probe.Probe]]
) -> probe.ShapeModel:
    """`model` with every dim that does not follow it at one of the `found` (axes, probe)
    pairs made a derived axis (a ceil-divided scale count is 1 at the first test and 12 at
    another, where doubling the first test's axes never moved it)."""
    derived = set(model.derived)

    def fix(specs: list[list[str | int]], kind: str, prefix: str) -> list[list[str | int]]:
        out = []
        for i, spec in enumerate(specs):
            dims: list[str | int] = []
            for j, dim in enumerate(spec):
                moved = dim not in derived and any(
                    (axes[dim] if isinstance(dim, str) else dim) != getattr(p, kind)[i][0][j]
                    for axes, p in found
                )
                name = f"{prefix}{i}_d{j}"
                if moved:
                    derived.add(name)
                dims.append(name if moved else dim)
            out.append(dims)
        return out

    inputs, outputs = fix(model.inputs, "inputs", "in"), fix(model.outputs, "outputs", "out")
    return probe.ShapeModel(inputs, outputs, derived, model.collapsed)


def forward(module: ModuleType, spec: dict[str, Any], device: str) -> tuple[Any, Any]:
    with device_neutral.on(device), _device_moves_kept():
        data = module.generate_input(**spec, seed=0)
        tensors, _ = structured.flatten(data)
        return tensors, module.ref_kernel(data)


@contextlib.contextmanager
def _device_moves_kept() -> Iterator[None]:
    """`module.to("cuda")` redirected onto the device the module is on already leaves it as it
    is. Under FakeTensorMode torch swaps every parameter for itself there and fails ("Couldn't
    swap"), which would force a real run of a source just for `MLA(config).to("cuda")`."""
    import torch

    original = torch.nn.Module.to

    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, *args, **kwargs)
        except RuntimeError as exc:
            dtype = torch._C._nn._parse_to(*args, **kwargs)[1]
            if "Couldn't swap" not in str(exc) or dtype is not None:
                raise
            return self

    torch.nn.Module.to = to  # type: ignore[method-assign]
    try:
        yield
    finally:
        torch.nn.Module.to = original  # type: ignore[method-assign]


def forward_real(module: ModuleType, spec: dict[str, Any]) -> tuple[Any, Any]:
    """The source run for real (its output shapes depend on its data): on the GPU if any."""
    import torch

    if torch.cuda.is_available():
        return forward(module, spec, "cuda")
    count = tensor_count(module, spec, elements=True)
    if count > REAL_PROBE_ELEMENTS:
        raise ValueError(
            "its output shapes depend on its data, so shapes are found by running it, and its "
            f"inputs ({count} elements) are too large to run on this host's CPU; import it on "
            "a GPU node"
        )
    return forward(module, spec, "cpu")


def _collapse(found: probe.Probe) -> probe.Probe:
    def per_dtype(items: list[tuple[tuple[int, ...], str]]) -> list[tuple[tuple[int, ...], str]]:
        totals: dict[str, int] = {}
        for shape, dtype in items:
            totals[dtype] = totals.get(dtype, 0) + common.elements([shape])
        return [((n,), dtype) for dtype, n in totals.items()]

    return replace(found, inputs=per_dtype(found.inputs), outputs=per_dtype(found.outputs))


def _derived(found: probe.Probe) -> probe.ShapeModel:
    """Every dim a derived axis: each workload is probed and carries its own values."""
    inputs = [[f"in{i}_d{j}" for j in range(len(s))] for i, (s, _) in enumerate(found.inputs)]
    outputs = [[f"out{i}_d{j}" for j in range(len(s))] for i, (s, _) in enumerate(found.outputs)]
    names = {str(n) for spec in (*inputs, *outputs) for n in spec}
    return probe.ShapeModel(inputs, outputs, names, collapsed=True)  # type: ignore[arg-type]


def data_kind(module: ModuleType, spec: dict[str, Any]) -> tuple[str, str | None]:
    """("tensor" | "tuple" | "structured", the structure described, for structured data)."""

    def generate() -> Any:
        with device_neutral.on("cpu"):
            data = module.generate_input(**spec, seed=0)
            return structured.kind(data), structured.flatten(data)[1].describe()

    kind, described = probe.fake_or_real(generate)
    return kind, described if kind == "structured" else None


def tensor_count(module: ModuleType, spec: dict[str, Any], *, elements: bool = False) -> int:
    """How many tensors (or, with `elements`, tensor elements) the data at `spec` holds (found
    under FakeTensorMode where it can be)."""

    def generate() -> int:
        with device_neutral.on("cpu"):
            tensors = structured.flatten(module.generate_input(**spec, seed=0))[0]
            return sum(t.numel() for t in tensors) if elements else len(tensors)

    return int(probe.fake_or_real(generate))


def written_inputs(module: ModuleType, spec: dict[str, Any]) -> list[int]:
    """The data's tensors (flat indices) that the source's ref_kernel writes in place: their
    version counters move (views share their base's). Found under FakeTensorMode; a source
    whose shapes depend on its data runs for real, on the CPU, up to REAL_PROBE_ELEMENTS."""

    def run() -> list[int]:
        with device_neutral.on("cpu"), _device_moves_kept():
            data = module.generate_input(**spec, seed=0)
            tensors, _ = structured.flatten(data)
            before = [t._version for t in tensors]
            module.ref_kernel(data)
            return [i for i, (t, v) in enumerate(zip(tensors, before)) if t._version != v]

    def real() -> list[int]:
        if tensor_count(module, spec, elements=True) > REAL_PROBE_ELEMENTS:
            return []
        return run()

    return list(probe.fake_or_real(run, real=real))


def run_on_cpu(module: ModuleType, spec: dict[str, Any]) -> None:
    """Run the source for real on the CPU at `spec`; raises what the source raises when it
    cannot run on a CPU."""
    with device_neutral.on("cpu"):
        module.ref_kernel(module.generate_input(**spec, seed=0))
