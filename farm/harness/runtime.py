"""Helpers used inside the worker: problem inputs, output checks and the runtime guard."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from farm.harness import seeds

REFERENCE_MODULE = "farm_problem_reference"


def load_problem_module(problem_dir: Path) -> ModuleType:
    """Import a problem's reference.py (for make_inputs and init inputs)."""
    spec = importlib.util.spec_from_file_location(REFERENCE_MODULE, problem_dir / "reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[REFERENCE_MODULE] = module
    spec.loader.exec_module(module)
    return module


def input_maker(
    reference: ModuleType, request: dict[str, Any], device: torch.device
) -> Callable[[int], list[torch.Tensor]]:
    """make(i): the inputs of call i of this request, from seed derive(seed_base, i)."""
    axes, dtype = request["axes"], getattr(torch, request["dtype"])
    base = request["seed_base"]

    def make(i: int) -> list[torch.Tensor]:
        gen = torch.Generator(device=device).manual_seed(seeds.derive(base, i))
        return list(reference.make_inputs(axes, dtype, device, gen))

    return make


def init_inputs_fn(
    reference: ModuleType, axes: dict[str, int]
) -> Callable[[], Sequence[Any]] | None:
    """Constructor arguments for KernelBench-form submissions (problems may define init_inputs)."""
    fn = getattr(reference, "init_inputs", None)
    if fn is None:
        return None
    return lambda: fn(axes)


def weight_seeder(seed: int) -> Callable[[], None]:
    """Seed torch's global RNG the way the reference's Model was seeded (KernelBench rule)."""
    return lambda: torch.manual_seed(seed)


def poison_allocator(nbytes: Sequence[int], device: torch.device) -> None:
    """Fill blocks of the output sizes with NaN bits and free them, so an output the kernel
    allocates but never writes holds NaN rather than a stale correct answer."""
    blocks = [
        torch.full((int(n),), 0xFF, dtype=torch.uint8, device=device) for n in nbytes if n > 0
    ]
    del blocks


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality (NaN-safe), used to verify inputs were not modified."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.numel() == 0:
        return True
    flat_a, flat_b = a.contiguous().reshape(-1), b.contiguous().reshape(-1)
    return bool(torch.equal(flat_a.view(torch.uint8), flat_b.view(torch.uint8)))


def as_output_list(result: Any) -> list[torch.Tensor]:
    """Normalise a kernel's return value; only exact torch.Tensor objects are accepted."""
    items = list(result) if isinstance(result, tuple | list) else [result]
    for i, item in enumerate(items):
        if type(item) is not torch.Tensor:
            raise TypeError(
                f"output {i} is a {type(item).__module__}.{type(item).__qualname__}, "
                "not a torch.Tensor (subclasses and lazy wrappers are not accepted)"
            )
    return items


class Guard:
    """Runtime guard inside the worker; delegates to farm.guard.runtime when it is installed."""

    def __init__(self) -> None:
        self.monitor = None
        try:
            from farm.guard import runtime as guard_runtime

            self.monitor = guard_runtime.IntegrityMonitor()
            from farm.harness import timing

            self.monitor.protect_module(timing)
        except (ImportError, AttributeError):
            self.monitor = None

    def before_import(self) -> None:
        if self.monitor is not None:
            self.monitor.snapshot()

    def after_import(self) -> list[dict[str, Any]]:
        return self.check()

    def check(self) -> list[dict[str, Any]]:
        if self.monitor is None:
            return []
        return [
            f.to_dict() if hasattr(f, "to_dict") else dict(f.__dict__)
            for f in self.monitor.verify()
        ]
