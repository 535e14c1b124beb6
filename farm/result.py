"""The result document (`"schema": "farm.result/1"`): the one thing an evaluation produces.

Keys that scripts rely on (DESIGN.md): top level `schema`, `suite` {`name`, `hash`}, `problem`,
`hardware`, `mode`, `verdict`, `reasons` [{`code`, `detail`}], `score` {`sol_score`, ...},
`workloads` [{`id`, `status`, `time_ms`, `sol_ms`, `baseline_ms` {`eager`, `compile`},
`sol_score`, ...}]. The JSON Schema is `farm/result.schema.json`; `validate()` checks a document
against its required structure without third-party libraries.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

SCHEMA = "farm.result/1"
SCHEMA_FILE = Path(__file__).with_name("result.schema.json")


class Verdict(StrEnum):
    """The document's verdict: the worst of its workloads' statuses, and COMPILE_ERROR when the
    submission's code could not be built, wherever the build failed (the import, a
    cpp_extension build, a worker that died importing it, a Triton kernel at its first launch,
    torch.compile at its first call); its workloads then carry status RUNTIME_ERROR or NOT_RUN
    reasons under a COMPILE_ERROR reason."""

    PASSED = "PASSED"
    INCORRECT = "INCORRECT"
    COMPILE_ERROR = "COMPILE_ERROR"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    TIMEOUT = "TIMEOUT"
    REJECTED = "REJECTED"


class WorkloadStatus(StrEnum):
    PASSED = "PASSED"
    INCORRECT = "INCORRECT"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    TIMEOUT = "TIMEOUT"
    REJECTED = "REJECTED"
    SKIPPED = "SKIPPED"  # not run here (too large for the simulator, hardware lacks fp8, ...)


class Mode(StrEnum):
    TEST = "test"  # correctness only
    BENCHMARK = "benchmark"  # correctness + timing + scores
    LEADERBOARD = "leaderboard"  # benchmark + secret-seed inputs; the only mode boards count
    PROFILE = "profile"  # benchmark + a profiler report as an artifact


# When several workloads fail differently, the verdict is the worst by this order.
_SEVERITY = [
    Verdict.PASSED,
    Verdict.INCORRECT,
    Verdict.TIMEOUT,
    Verdict.RUNTIME_ERROR,
    Verdict.COMPILE_ERROR,
    Verdict.REJECTED,
]


def worst(verdicts: list[Verdict]) -> Verdict:
    """The most severe verdict of a list (PASSED for an empty list)."""
    return max(verdicts, key=_SEVERITY.index, default=Verdict.PASSED)


def reason(code: str, detail: str, **extra: Any) -> dict[str, Any]:
    """A machine-readable reason: an UPPER_SNAKE `code` and a human `detail`."""
    return {"code": code, "detail": detail, **extra}


class ResultSchemaError(ValueError):
    """A document is not a valid farm.result/1 document; the message names the field."""


_TOP_LEVEL: dict[str, type | tuple[type, ...]] = {
    "schema": str,
    "suite": dict,
    "problem": str,
    "hardware": str,
    "mode": str,
    "verdict": str,
    "reasons": list,
    "score": dict,
    "workloads": list,
    "environment": dict,
    "guard": dict,
}
_WORKLOAD: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "status": str,
    "time_ms": (int, float, type(None)),
    "sol_ms": (int, float, type(None)),
    "baseline_ms": dict,
    "sol_score": (int, float, type(None)),
}


def reasons_grouped(
    reasons: list[tuple[str, str, str | None]],
) -> list[tuple[str, str, list[str]]]:
    """(code, detail, workload) triples with the same code and detail merged, in first-seen
    order, each with the workloads it came from: a traceback every workload raised is shown
    once, followed by the list of workloads, instead of once per workload."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for code, detail, workload in reasons:
        where = grouped.setdefault((code, detail), [])
        if workload and workload not in where:
            where.append(workload)
    return [(code, detail, where) for (code, detail), where in grouped.items()]


def reason_line(code: str, detail: str, workloads: list[str], *, limit: int = 400) -> str:
    """One grouped reason as printed: `CODE [w1, w2]: detail` (detail cut at `limit` chars)."""
    where = f" [{', '.join(workloads)}]" if workloads else ""
    return f"  {code}{where}: {detail.rstrip()[:limit]}"


def validate(doc: Any) -> dict[str, Any]:
    """Check the structure every consumer relies on; return `doc` or raise ResultSchemaError."""
    if not isinstance(doc, dict):
        raise ResultSchemaError("result: must be a JSON object")
    _check_fields(doc, _TOP_LEVEL, "result")
    if doc["schema"] != SCHEMA:
        raise ResultSchemaError(f"result.schema: must be '{SCHEMA}', got {doc['schema']!r}")
    if doc["verdict"] not in Verdict.__members__:
        raise ResultSchemaError(f"result.verdict: {doc['verdict']!r} is not a verdict")
    if doc["mode"] not in {m.value for m in Mode}:
        raise ResultSchemaError(f"result.mode: {doc['mode']!r} is not a mode")
    _check_fields(doc["suite"], {"name": str, "hash": (str, type(None))}, "result.suite")
    _check_fields(doc["score"], {"sol_score": (int, float, type(None))}, "result.score")
    for i, r in enumerate(doc["reasons"]):
        _check_fields(r, {"code": str, "detail": str}, f"result.reasons[{i}]")
    for i, w in enumerate(doc["workloads"]):
        _check_fields(w, _WORKLOAD, f"result.workloads[{i}]")
        if w["status"] not in WorkloadStatus.__members__:
            raise ResultSchemaError(f"result.workloads[{i}].status: {w['status']!r} is unknown")
    return doc


def _check_fields(obj: Any, fields: dict[str, type | tuple[type, ...]], where: str) -> None:
    if not isinstance(obj, dict):
        raise ResultSchemaError(f"{where}: must be an object")
    for key, kind in fields.items():
        if key not in obj:
            raise ResultSchemaError(f"{where}.{key}: is required")
        if not isinstance(obj[key], kind) or isinstance(obj[key], bool):
            raise ResultSchemaError(
                f"{where}.{key}: has the wrong type ({type(obj[key]).__name__})"
            )


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=False, allow_nan=False) + "\n"
