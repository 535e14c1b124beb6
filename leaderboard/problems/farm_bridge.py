"""The server's view of the framework-free core: suites, hardware specs and SOL bounds.

farm.sol and farm.hardware.specs may be absent in a partial install; then hardware classes carry
no peaks and SOL figures are None, and the roofline floor cannot be checked (logged once).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Mapping
from functools import cache
from typing import Any

from farm.suite.loader import Suite, available_suites, load_suite
from farm.suite.model import Problem, Workload

log = logging.getLogger(__name__)

HARDWARE_CLASSES = (
    "nvidia-a100",
    "nvidia-h100",
    "nvidia-h200",
    "nvidia-b200",
    "amd-mi300x",
    "amd-mi325x",
    "amd-mi355x",
    "npu-sim-v1",
)
_BASE_LANGUAGES = ("pytorch", "triton")
_VENDOR_LANGUAGES = {"nvidia": ("cuda",), "amd": ("hip",)}
_VENDOR_DEVICE = {"nvidia": "cuda", "amd": "rocm", "npu": "npu-sim", "cpu": "cpu"}


def suite_names() -> list[str]:
    return sorted(available_suites())


def suite_load(name: str) -> Suite:
    """The pinned suite, verified against its manifest (raises farm.errors.SuiteError)."""
    return load_suite(name, verify=True)


def vendor_of(name: str) -> str:
    return name.split("-", 1)[0]


def languages_for(vendor: str) -> list[str]:
    return [*_BASE_LANGUAGES, *_VENDOR_LANGUAGES.get(vendor, ())]


def _specs_module() -> Any:
    try:
        from farm.hardware import specs
    except ImportError:
        log.warning("farm.hardware.specs is not installed: hardware classes carry no peaks")
        return None
    return specs


@cache
def hardware_spec(name: str) -> Any:
    specs = _specs_module()
    if specs is None:
        return None
    try:
        return specs.get_spec(name)
    except Exception:  # an unknown class: no figures rather than no server
        log.warning("no hardware spec for %s", name)
        return None


def hardware_names() -> list[str]:
    specs = _specs_module()
    names = set(HARDWARE_CLASSES)
    if specs is not None:
        names |= {getattr(s, "name", str(s)) for s in _all_specs(specs)}
    return sorted(names)


def _all_specs(specs: Any) -> list[Any]:
    found = specs.all_specs()
    return list(found.values()) if isinstance(found, dict) else list(found)


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


def sol_ms(problem: Problem, workload: Workload, hardware: str) -> dict[str, Any] | None:
    """The SOL bound of one workload on `hardware` as JSON, or None when it cannot be computed."""
    spec = hardware_spec(hardware)
    if spec is None:
        return None
    try:
        from farm.sol import sol_bound

        bound = sol_bound(problem, workload, spec)
    except ImportError:
        return None
    except Exception as exc:  # e.g. a dtype the hardware lacks
        log.debug("no SOL for %s/%s on %s: %s", problem.name, workload.id, hardware, exc)
        return None
    return {
        "workload": workload.id,
        "time_ms": bound.time_ms,
        "compute_ms": getattr(bound, "compute_ms", None),
        "memory_ms": getattr(bound, "memory_ms", None),
        "bound": getattr(bound, "bound", None),
    }


def floor_ms(problem: Problem, workload: Workload, hardware: str) -> float | None:
    """The time (ms) below which a workload's time is impossible on `hardware`:
    farm.sol.floor_ms (SOL less the output bytes the last-level cache can hold) x FLOOR_SLACK.
    None when it cannot be computed (the check is then skipped)."""
    spec = hardware_spec(hardware)
    slack = floor_slack()
    if spec is None or slack is None:
        return None
    try:
        from farm.sol import floor_ms as sol_floor_ms

        return float(sol_floor_ms(problem, workload, spec)) * slack
    except Exception as exc:
        log.debug("no floor for %s/%s on %s: %s", problem.name, workload.id, hardware, exc)
        return None


def floor_slack() -> float | None:
    """farm.scoring.FLOOR_SLACK: times below SOL x this are physically impossible."""
    try:
        from farm.scoring import FLOOR_SLACK
    except ImportError:
        log.warning("farm.scoring is not installed: the roofline floor is not checked")
        return None
    return float(FLOOR_SLACK)


@functools.lru_cache(maxsize=16)
def suite_pinned(name: str, suite_hash: str) -> Suite | None:
    """The suite `name` as pinned with `suite_hash` (verified), or None when the copy on disk
    is missing, broken or pinned differently (the database is then behind `sync_suites`)."""
    from farm.errors import FarmError

    try:
        suite = suite_load(name)
    except FarmError as exc:
        log.warning("suite %s cannot be read for its problem pages: %s", name, exc)
        return None
    return suite if suite.hash == suite_hash else None
