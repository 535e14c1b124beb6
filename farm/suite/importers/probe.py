"""Shapes, dtypes and FLOPs of a source's inputs and outputs, found without computing anything:
the source runs under torch's FakeTensorMode (no memory is touched, any size works) and
torch.utils.flop_counter counts the FLOPs of the ops it knows.

`shape_model` turns probes at several axis values into problem.yaml shapes: a dim becomes an
axis name when it equals that axis and follows it, an int when no axis moves it, and otherwise a
derived axis (`out0_d2`) whose value each workload carries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from farm.suite.model import DTYPE_SIZES

# torch's dtype strings -> the problem format's names: every dtype the format knows
DTYPE_NAMES = {f"torch.{name}": name for name in DTYPE_SIZES}


@dataclass(frozen=True)
class Probe:
    """Input and output tensors as (shape, dtype name) lists, the counted FLOPs, the elements
    of the module's parameters and buffers (`state`), and the elements of the largest tensor
    any op produced on the way (`activation`)."""

    inputs: list[tuple[tuple[int, ...], str]]
    outputs: list[tuple[tuple[int, ...], str]]
    flops: int
    state: int = 0
    activation: int = 0

    def footprint(self) -> int:
        """Elements a run holds at least: weights plus the largest tensor of the forward."""
        return self.state + self.activation


def tensors_of(value: Any, what: str) -> list[Any]:
    """The tensors of a tensor / tuple / list / dict value, in order; ValueError otherwise."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    items = list(value.values()) if isinstance(value, dict) else value
    if isinstance(items, list | tuple) and all(isinstance(t, torch.Tensor) for t in items):
        return list(items)
    raise ValueError(f"{what} must be tensors (got {type(value).__name__})")


def describe(tensors: list[Any]) -> list[tuple[tuple[int, ...], str]]:
    out = []
    for t in tensors:
        name = DTYPE_NAMES.get(str(t.dtype))
        if name is None:
            raise ValueError(f"dtype {t.dtype} is not supported by the problem format")
        out.append((tuple(int(d) for d in t.shape), name))
    return out


def memoised(probe_at: Callable[[dict[str, int]], Probe]) -> Callable[[dict[str, int]], Probe]:
    """`probe_at` run once per axis point, however often the point is asked for (the shape
    model, the FLOP formula and the workloads ask for the same points; each probe runs the
    source)."""
    probes: dict[tuple[tuple[str, int], ...], Probe] = {}

    def at(axes: dict[str, int]) -> Probe:
        key = tuple(sorted(axes.items()))
        if key not in probes:
            probes[key] = probe_at(dict(key))
        return probes[key]

    return at


def fake_mode() -> Any:
    """A FakeTensorMode that accepts real tensors (a source's module-level constants)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    return FakeTensorMode(allow_non_fake_inputs=True)


def fake_probe(
    make: Callable[[], tuple[Any, ...]], *, real: Callable[[], tuple[Any, ...]] | None = None
) -> Probe:
    """Run `make() -> (inputs, outputs[, module])` under FakeTensorMode and a FLOP counter;
    a module returned third has its parameters and buffers counted. A source whose output
    shape depends on its data (`bincount`, `.item()`), which FakeTensorMode cannot follow, is
    run for real instead: `real()` when given, else `make()` (probes use the source's first
    test sizes and doubles)."""
    again = real or make
    return fake_or_real(lambda: _counted(make), real=lambda: _counted(again))


def fake_or_real(run: Callable[[], Any], *, real: Callable[[], Any] | None = None) -> Any:
    """`run()` under FakeTensorMode; `real()` (default: `run()`, on the CPU) when the source's
    shapes depend on its data, or it moves real module weights, which FakeTensorMode cannot
    follow."""
    from torch._subclasses.fake_tensor import (
        DataDependentOutputException,
        DynamicOutputShapeException,
    )

    again = real or run
    try:
        with fake_mode():
            return run()
    except (DataDependentOutputException, DynamicOutputShapeException):
        return again()
    except RuntimeError as exc:
        if "Couldn't swap" not in str(exc):
            raise
        return again()  # a module built with real weights and moved inside the fake run


def _counted(make: Callable[[], tuple[Any, ...]]) -> Probe:
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    largest = _largest_output_mode()()
    with counter, largest:
        inputs, outputs, *module = make()
        ins, outs = tensors_of(inputs, "inputs"), tensors_of(outputs, "outputs")
        state = sum(t.numel() for m in module for t in (*m.parameters(), *m.buffers()))
        return Probe(
            describe(ins),
            describe(outs),
            int(counter.get_total_flops()),
            int(state),
            largest.elements,
        )


def _largest_output_mode() -> type:
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    class LargestOutput(TorchDispatchMode):
        """Remembers the element count of the largest tensor any op returns."""

        def __init__(self) -> None:
            super().__init__()
            self.elements = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for leaf in tree_leaves(out):
                if hasattr(leaf, "numel"):
                    self.elements = max(self.elements, int(leaf.numel()))
            return out

    return LargestOutput


@dataclass
class ShapeModel:
    """problem.yaml shapes (axis names, ints or derived axis names) and per-workload values of
    the derived axes."""

    inputs: list[list[str | int]]
    outputs: list[list[str | int]]
    derived: set[str]
    collapsed: bool = False  # tensors listed per dtype (gpumode_shapes.py)

    def derived_axes(self, probe: Probe) -> dict[str, int]:
        values: dict[str, int] = {}
        for shapes, specs in ((probe.inputs, self.inputs), (probe.outputs, self.outputs)):
            for (shape, _), spec in zip(shapes, specs):
                for dim, entry in zip(shape, spec):
                    if isinstance(entry, str) and entry in self.derived:
                        values[entry] = dim
        return values


def shape_model(probe_at: Callable[[dict[str, int]], Probe], axes: dict[str, int]) -> ShapeModel:
    """Shapes of inputs and outputs in terms of `axes` (each axis probed at twice its value)."""
    base = probe_at(axes)
    moved = {name: probe_at({**axes, name: axes[name] * 2}) for name in axes}
    derived: set[str] = set()

    def spec(kind: str, index: int, shape: tuple[int, ...]) -> list[str | int]:
        out: list[str | int] = []
        for j, dim in enumerate(shape):
            movers = [n for n, p in moved.items() if _shapes(p, kind)[index][0][j] != dim]
            if not movers:
                out.append(dim)
            elif (
                len(movers) == 1
                and dim == axes[movers[0]]
                and (_shapes(moved[movers[0]], kind)[index][0][j] == 2 * dim)
            ):
                out.append(movers[0])
            else:
                name = f"{'out' if kind == 'outputs' else 'in'}{index}_d{j}"
                derived.add(name)
                out.append(name)
        return out

    for name, p in moved.items():
        if len(p.inputs) != len(base.inputs) or len(p.outputs) != len(base.outputs):
            raise ValueError(f"the number of tensors changes with axis {name}")
    inputs = [spec("inputs", i, s) for i, (s, _) in enumerate(base.inputs)]
    outputs = [spec("outputs", i, s) for i, (s, _) in enumerate(base.outputs)]
    return ShapeModel(inputs, outputs, derived)


def _shapes(probe: Probe, kind: str) -> list[tuple[tuple[int, ...], str]]:
    return probe.inputs if kind == "inputs" else probe.outputs
