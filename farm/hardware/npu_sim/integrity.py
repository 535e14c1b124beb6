"""Detecting a submission that alters the simulator, the interpreter or the libraries the cost
path uses.

At install time `Frozen` records, for every namespace the cost path depends on (our own
modules and classes, the Triton interpreter, numpy, torch's Tensor class and pytree helpers,
builtins, ...), each attribute's identity and, for Python functions, the identity of their code,
defaults and wrapped implementation. After a measured call (and before it, to catch edits made
while the submission was imported) `Frozen.verify()` names every difference. Identity is
compared, never addresses' values, so the check is exact and costs about a millisecond.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import hashlib
import heapq
import inspect
import math
import sys
import time
import types

# The checker's own builtins are bound here at import, so replacing them in `builtins` later
# cannot blind it (the replacement itself is reported, `builtins` being watched).
from builtins import (  # noqa: UP029
    any,
    getattr,
    isinstance,
    list,
    repr,
    set,
    sorted,
    str,
    tuple,
    vars,
    zip,
)
from typing import Any

_MISSING = object()
_FUNCTION_PARTS = ("__code__", "__defaults__", "__kwdefaults__")


def _function_parts(obj: Any) -> tuple:
    """Identities that make up a Python function (or a wrapper's implementation)."""
    parts: list[Any] = []
    for target in (obj, getattr(obj, "_implementation", None), getattr(obj, "__wrapped__", None)):
        if isinstance(target, types.FunctionType):
            parts.extend(getattr(target, p) for p in _FUNCTION_PARTS)
            parts.extend(c.cell_contents for c in target.__closure__ or () if _filled(c))
    return tuple(parts)


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


# Data that the interpreter itself rewrites: time.tzset() (which Django calls when its settings
# load) sets the time module's zone attributes; they change no cost or output.
_VOLATILE = {"time": frozenset({"tzname", "timezone", "altzone", "daylight"})}


def _entries(owner: Any) -> dict[str, tuple]:
    """name -> (object, its function parts) for every attribute defined on `owner`."""
    skip = _VOLATILE.get(getattr(owner, "__name__", ""), frozenset()) if _is_module(owner) else ()
    return {
        name: (value, _function_parts(value))
        for name, value in list(vars(owner).items())
        if name not in skip
    }


def _is_module(owner: Any) -> bool:
    return isinstance(owner, types.ModuleType)


def _label(owner: Any) -> str:
    return str(getattr(owner, "__qualname__", None) or getattr(owner, "__name__", repr(owner)))


class Frozen:
    """A snapshot of namespaces whose attributes must not change during a measured call."""

    def __init__(self, owners: list[Any], values: dict[str, Any]) -> None:
        """`owners`: modules, classes and objects to watch; `values`: name -> dataclass
        instance (or other value) that must stay equal to a deep copy taken now."""
        self._owners = list(owners)
        self._entries = [_entries(o) for o in self._owners]
        self._values = {k: (v, _plain(v)) for k, v in values.items()}

    def verify(self) -> list[str]:
        """One `tampered: ...` line per attribute changed, added to a class, or removed."""
        findings: list[str] = []
        for owner, before in zip(self._owners, self._entries):
            findings.extend(_compare(owner, before))
        for name, (obj, plain) in self._values.items():
            if _plain(obj) != plain:
                findings.append(f"tampered: {name} was modified")
        return findings


def _compare(owner: Any, before: dict[str, tuple]) -> list[str]:
    now = vars(owner)
    findings = []
    for name, (obj, parts) in before.items():
        value = now.get(name, _MISSING)
        if value is not obj or _function_parts(value) != parts:
            findings.append(f"tampered: {_label(owner)}.{name} was replaced or edited")
    if isinstance(owner, type):
        added = sorted(n for n in set(now) - set(before) if _shadows(owner, n))
        findings.extend(f"tampered: {_label(owner)}.{name} was added" for name in added)
    return findings


def _shadows(cls: type, name: str) -> bool:
    """Whether a new class attribute can change behaviour we rely on: any addition to our own
    classes, or one that hides an attribute of a base class."""
    if cls.__module__.startswith("farm.hardware.npu_sim"):
        return True
    return any(name in vars(base) for base in cls.__mro__[1:])


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return repr(dataclasses.asdict(value))
    return repr(value)


def watched_namespaces(extra: list[Any]) -> list[Any]:
    """Modules and classes the cost path relies on, plus `extra` (the installed hooks)."""
    import numpy
    import torch
    import torch.utils._pytree as pytree
    from torch.utils import _python_dispatch
    from triton.runtime import interpreter as interp

    prefixes = ("farm.hardware.npu_sim", "numpy")
    modules = [m for name, m in sorted(sys.modules.items()) if name.startswith(prefixes) and m]
    classes = [
        interp.InterpreterBuilder,
        interp.GridExecutor,
        interp.InterpretedFunction,
        interp.ReduceOps,
        interp.ScanOps,
        interp.ReduceScanOpInterface,
        interp.TensorHandle,
        torch.Tensor,
        _python_dispatch.TorchDispatchMode,
    ]
    ours = [
        v
        for m in modules
        if m.__name__.startswith(prefixes[0])
        for v in vars(m).values()
        if isinstance(v, type) and v.__module__ == m.__name__
    ]
    libs = [
        builtins,
        functools,
        hashlib,
        heapq,
        inspect,
        math,
        time,
        interp,
        pytree,
        _python_dispatch,
        numpy,
    ]
    return _unique([*libs, *modules, *classes, *ours, *extra])


def _unique(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if all(item is not o for o in out):
            out.append(item)
    return out
