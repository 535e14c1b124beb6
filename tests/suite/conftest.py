"""Shared helpers for the suite tests: load core-v1 and run references at small workloads."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
import torch

from farm.suite.loader import load_suite
from farm.suite.model import Problem, Workload

SUITE = "core-v1"


@cache
def core_suite():  # type: ignore[no-untyped-def]
    return load_suite(SUITE)


@cache
def reference_module(path: Path) -> ModuleType:
    """Import a problem's reference.py under a private module name."""
    spec = importlib.util.spec_from_file_location(f"_ref_{path.parent.name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_inputs(problem: Problem, workload: Workload, seed: int = 0) -> tuple:
    """The problem's inputs for `workload` on CPU, drawn from a generator seeded with `seed`."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    dtype = getattr(torch, workload.dtype)
    module = reference_module(problem.reference_path)
    return tuple(module.make_inputs(dict(workload.axes), dtype, "cpu", generator))


def run_reference(problem: Problem, inputs: tuple) -> tuple:
    """Call the reference and always return a tuple of outputs."""
    out = reference_module(problem.reference_path).reference(*inputs)
    return tuple(out) if isinstance(out, tuple | list) else (out,)


def small_workloads(problem: Problem) -> list[Workload]:
    return [w for w in problem.workloads if w.small]


def problem_params() -> list:
    return [pytest.param(p, id=p.name) for p in core_suite().problems.values()]


def small_params() -> list:
    """One parameter per (problem, small workload)."""
    return [
        pytest.param(p, w, id=f"{p.name}-{w.id}")
        for p in core_suite().problems.values()
        for w in small_workloads(p)
    ]
