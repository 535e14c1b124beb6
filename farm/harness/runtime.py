"""Helpers used inside the worker: problem inputs, output checks and the runtime guard."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from farm.harness import seeds

REFERENCE_MODULE = "farm_problem_reference"


def load_file_module(path: Path, name: str) -> ModuleType:
    """Import the Python file at `path` as module `name` (registered in sys.modules)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_problem_module(problem_dir: Path) -> ModuleType:
    """Import a problem's reference.py (for make_inputs and init inputs)."""
    return load_file_module(problem_dir / "reference.py", REFERENCE_MODULE)


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


def module_constants(reference: ModuleType, axes: dict[str, int]) -> dict[str, Any]:
    """The problem's module constants for these axes (KernelBench problems define them)."""
    fn = getattr(reference, "module_constants", None)
    return dict(fn(axes)) if fn else {}


def submission_namespace(reference: ModuleType, axes: dict[str, int]) -> dict[str, Any]:
    """The names a submission sees before its own code runs (a KernelBench problem's source
    module, with its constants at these axes); empty for problems that define none."""
    fn = getattr(reference, "submission_namespace", None)
    return dict(fn(axes)) if fn else {}


def weight_seeder(seed: int) -> Callable[[], None]:
    """Seed torch's global RNG the way the reference's Model was seeded (KernelBench rule)."""

    def seed_weights() -> None:
        torch.manual_seed(seed)

    return seed_weights


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
    """The runtime guard inside the worker (farm.guard.runtime), set up before the import."""

    def __init__(self, *, cuda: bool = False) -> None:
        from farm.guard import runtime as guard_runtime
        from farm.harness import protocol, timing

        self.cuda = cuda
        self.pending: list[dict[str, Any]] = []
        self.monitor = guard_runtime.IntegrityMonitor()
        for module in (timing, protocol, sys.modules[__name__]):
            self.monitor.protect_module(module)
        if cuda:
            guard_runtime.LaunchObserver.install_extension_hooks()

    @contextlib.contextmanager
    def observe(self, module: ModuleType | None) -> Iterator[None]:
        """Around a checked call: launches (decoy kernels), streams, threads left running."""
        from farm.guard import runtime as guard_runtime

        streams = guard_runtime.StreamCounter() if self.cuda else contextlib.nullcontext()
        with guard_runtime.LaunchObserver() as launches, streams, self.monitor.watch_call():
            yield
        found = guard_runtime.check_launches(module, launches) if module is not None else []
        if self.cuda:
            found += streams.findings()  # type: ignore[union-attr]
        self.pending += [f.to_dict() for f in found]

    def before_import(self) -> None:
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
