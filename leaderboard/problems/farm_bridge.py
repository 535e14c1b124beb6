"""The server's view of the framework-free core: suites, hardware specs and SOL bounds.

The core is a dependency of the server like any library: it is imported here, never guessed at.
The hardware classes are the spec table's (farm.hardware.specs).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from farm.errors import FarmError
from farm.hardware import kinds, specs
from farm.hardware.specs import HardwareSpec
from farm.scoring import FLOOR_SLACK
from farm.sol import SolBound, UnsupportedWorkload, sol_bound
from farm.sol import floor_ms as sol_floor_ms
from farm.suite.loader import Suite, available_suites, load_suite
from farm.suite.model import Problem, Workload

log = logging.getLogger(__name__)
# what the core raises for a name it does not know or a workload a class cannot run
UNRESOLVABLE = (FarmError, UnsupportedWorkload)
_BASE_LANGUAGES = ("pytorch", "triton")


def suite_names() -> list[str]:
    return sorted(available_suites())


def suite_load(name: str) -> Suite:
    """The pinned suite, verified against its manifest (raises farm.errors.SuiteError)."""
    return load_suite(name, verify=True)


def size_note(suite: str, problem: str) -> str | None:
    """Which workloads cpu and npu-sim leave out and why (farm.suite.model.Problem.size_note);
    None when all run everywhere, or when the server cannot read the suite's files."""
    try:
        return suite_load(suite).problem(problem).size_note()
    except FarmError:
        return None


def size_statement(suite: str, problem: str, ran: Iterable[str]) -> str | None:
    """Which workloads a result ran, which of the problem's it did not, and why
    (farm.suite.model.Problem.size_statement); None when the server cannot read the suite."""
    try:
        return suite_load(suite).problem(problem).size_statement(ran)
    except FarmError:
        return None


def languages_for(spec: HardwareSpec) -> list[str]:
    """What a class runs: PyTorch and Triton everywhere, plus its device kind's own languages."""
    return [*_BASE_LANGUAGES, *kinds.get_kind(spec.device).languages]


def language_advice(language: str) -> str:
    """Where a source in `language` can run, for a refusal's message."""
    for kind in kinds.all_kinds():
        if language in kind.languages:
            return f"a {kind.name} hardware class ({', '.join(kind.classes())})"
    return "a hardware class that runs it"


@cache
def hardware_spec(name: str) -> HardwareSpec | None:
    """The spec of hardware class `name`; None for a class the spec table does not know."""
    try:
        return specs.get_spec(name)
    except FarmError:
        log.warning("no hardware spec for %s", name)
        return None


def hardware_names() -> list[str]:
    return sorted(spec.name for spec in specs.all_specs())


def spec_json(spec: Any) -> dict[str, Any]:
    """A JSON-able copy of a HardwareSpec: tuple keys become "dtype/unit"."""
    if spec is None:
        return {}
    if dataclasses.is_dataclass(spec):
        raw = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)}
    else:
        raw = dict(vars(spec))
    return _jsonable(raw)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {_key(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def _key(key: Any) -> str:
    return "/".join(map(str, key)) if isinstance(key, tuple) else str(key)


def sol_on(problem: Problem, workload: Workload, hardware: str) -> SolBound | None:
    """The SOL bound of one workload on `hardware`; None when the problem cannot run there (an
    unknown class, a feature or dtype the hardware lacks: UNRESOLVABLE)."""
    spec = hardware_spec(hardware)
    if spec is None:
        return None
    try:
        return sol_bound(problem, workload, spec)
    except UNRESOLVABLE as exc:
        log.debug("no SOL for %s/%s on %s: %s", problem.name, workload.id, hardware, exc)
        return None


def sol_ms(problem: Problem, workload: Workload, hardware: str) -> dict[str, Any] | None:
    """sol_on as JSON (the problem pages' SOL table)."""
    bound = sol_on(problem, workload, hardware)
    if bound is None:
        return None
    return {
        "workload": workload.id,
        "time_ms": bound.time_ms,
        "compute_ms": bound.compute_ms,
        "memory_ms": bound.memory_ms,
        "overhead_ms": bound.overhead_ms,
        "bound": bound.bound,
    }


def floor_ms(problem: Problem, workload: Workload, hardware: str) -> float:
    """The time (ms) below which a workload's time is impossible on `hardware`:
    farm.sol.floor_ms (SOL less the output bytes the last-level cache can hold) x
    farm.scoring.FLOOR_SLACK. Raises one of UNRESOLVABLE when it cannot be computed (an unknown
    class, a feature or dtype the hardware lacks)."""
    spec = specs.get_spec(hardware)
    return float(sol_floor_ms(problem, workload, spec)) * FLOOR_SLACK


@functools.lru_cache(maxsize=16)
def suite_pinned(name: str, suite_hash: str) -> Suite | None:
    """The suite `name` as pinned with `suite_hash` (verified), or None when the copy on disk
    is missing, broken or pinned differently (the database is then behind `sync_suites`)."""
    try:
        suite = suite_load(name)
    except FarmError as exc:
        log.warning("suite %s cannot be read for its problem pages: %s", name, exc)
        return None
    return suite if suite.hash == suite_hash else None
