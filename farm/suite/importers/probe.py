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

DTYPE_NAMES = {
    "torch.float64": "float64",
    "torch.float32": "float32",
    "torch.float16": "float16",
    "torch.bfloat16": "bfloat16",
    "torch.int64": "int64",
    "torch.int32": "int32",
    "torch.int16": "int16",
    "torch.int8": "int8",
    "torch.uint8": "uint8",
    "torch.bool": "bool",
}


@dataclass(frozen=True)
class Probe:
    """Input and output tensors as (shape, dtype name) lists, and the counted FLOPs."""

    inputs: list[tuple[tuple[int, ...], str]]
    outputs: list[tuple[tuple[int, ...], str]]
    flops: int


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


def fake_probe(make: Callable[[], tuple[Any, Any]]) -> Probe:
    """Run `make() -> (inputs, outputs)` under FakeTensorMode and a FLOP counter."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with FakeTensorMode(allow_non_fake_inputs=True), counter:
        inputs, outputs = make()
        ins, outs = tensors_of(inputs, "inputs"), tensors_of(outputs, "outputs")
        return Probe(describe(ins), describe(outs), int(counter.get_total_flops()))


@dataclass
class ShapeModel:
    """problem.yaml shapes (axis names, ints or derived axis names) and per-workload values of
    the derived axes."""

    inputs: list[list[str | int]]
    outputs: list[list[str | int]]
    derived: set[str]

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
