"""The result document as typed objects: round trips, the older interval shapes, errors that name
the field, and farm/result.schema.json agreeing with Result.from_json field by field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from farm.result import (
    SCHEMA_FILE,
    Interval,
    Result,
    ResultSchemaError,
    TimingSummary,
    WorkloadEntry,
    WorkloadStatus,
    validate,
)

FIXTURES = Path(__file__).parent / "fixtures" / "results"
DOCS = sorted(FIXTURES.glob("*.json"))  # written by `farm eval --device cpu --json`


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text())


@pytest.mark.parametrize("path", DOCS, ids=[p.stem for p in DOCS])
def test_a_harness_document_survives_the_round_trip_unchanged(path):
    doc = _load(path)
    result = Result.from_json(doc)
    assert result.to_json() == doc
    assert Result.from_json(result.to_json()) == result


def test_typed_fields_carry_the_timing_and_its_interval():
    result = Result.from_json(_load(FIXTURES / "passed_cpu_vector_add.json"))
    w = result.workloads[0]
    assert w.status is WorkloadStatus.PASSED and w.timed_pass
    assert w.timing is not None and w.timing.median_ms == w.time_ms
    assert w.interval is not None and w.interval.low_ms <= w.time_ms <= w.interval.high_ms


def _entry(**extra: Any) -> dict[str, Any]:
    return {
        "id": "w",
        "status": "PASSED",
        "time_ms": 2.0,
        "sol_ms": 1.0,
        "baseline_ms": {"eager": 4.0},
        "sol_score": 0.5,
        **extra,
    }


@pytest.mark.parametrize(
    "old",
    [
        {"timing": {"ci95_low_ms": 1.5, "ci95_high_ms": 2.5}},
        {"stats": {"median_ms": 2.0, "ci95_low_ms": 1.5, "ci95_high_ms": 2.5}},
        {"time_ci_ms": [1.5, 2.5]},
        {"timing": {"method": "events"}, "time_ci_ms": [1.5, 2.5]},
    ],
    ids=["timing", "stats", "time_ci_ms", "timing-without-ci"],
)
def test_every_stored_interval_shape_reads_as_one(old):
    entry = WorkloadEntry.from_json(_entry(**old))
    assert entry.interval == Interval(1.5, 2.5)
    again = entry.to_json()
    assert "stats" not in again and "time_ci_ms" not in again
    assert again["timing"]["ci95_low_ms"] == 1.5 and again["timing"]["ci95_high_ms"] == 2.5


def test_an_entry_without_an_interval_has_none():
    assert WorkloadEntry.from_json(_entry()).interval is None
    assert TimingSummary.from_json({"method": "npu-sim-model"}).ci is None


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            ["workloads", 0, "timing", "ci95_low_ms"],
            "fast",
            "result.workloads[0].timing.ci95_low_ms",
        ),
        (["workloads", 0, "time_ms"], True, "result.workloads[0].time_ms: has the wrong type"),
        (["workloads", 0, "status"], "FINE", "result.workloads[0].status: 'FINE' is unknown"),
        (["reasons"], [{"code": 1, "detail": ""}], "result.reasons[0].code"),
        (["guard", "findings"], [{"detail": "x"}], "result.guard.findings[0].code: is required"),
        (["verdict"], "OK", "result.verdict: 'OK' is not a verdict"),
        (["schema"], "farm.result/0", "result.schema: must be 'farm.result/1'"),
    ],
)
def test_a_bad_field_is_named(path, value, message):
    doc = _load(FIXTURES / "passed_cpu_vector_add.json")
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ResultSchemaError, match=message.replace("[", r"\[").replace("]", r"\]")):
        validate(doc)


def test_a_missing_required_key_is_named():
    doc = _load(FIXTURES / "passed_cpu_vector_add.json")
    del doc["workloads"][0]["sol_ms"]
    with pytest.raises(ResultSchemaError, match=r"result\.workloads\[0\]\.sol_ms: is required"):
        validate(doc)


# --- the JSON Schema and the types agree ----------------------------------------------------


def _wrong(prop: dict[str, Any]) -> Any:
    """A value the schema property `prop` does not allow."""
    kinds = prop.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if "enum" in prop or "const" in prop:
        return "NOT_A_MEMBER"
    return {"x": 1} if "object" not in kinds and "$ref" not in json.dumps(prop) else "x"


def _places(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any], list[Any]]]:
    """(schema definition name, the object in `doc` it describes, its path) for every typed
    object of the document."""
    w = doc["workloads"][0]
    return [
        ("", doc, []),
        ("suite", doc["suite"], ["suite"]),
        ("score", doc["score"], ["score"]),
        ("guard", doc["guard"], ["guard"]),
        ("workload", w, ["workloads", 0]),
        ("timing", w["timing"], ["workloads", 0, "timing"]),
        ("environment", doc["environment"], ["environment"]),
        ("reason", doc["reasons"][0], ["reasons", 0]),
        ("finding", doc["guard"]["findings"][0], ["guard", "findings", 0]),
    ]


def _definition(schema: dict[str, Any], name: str) -> dict[str, Any]:
    if name in ("", "suite", "score", "guard"):
        return schema if not name else schema["properties"][name]
    return schema["$defs"][name]


def _accepts(validator: Any, doc: dict[str, Any]) -> tuple[bool, bool]:
    try:
        validate(doc)
        ours = True
    except ResultSchemaError:
        ours = False
    return ours, validator.is_valid(doc)


def test_schema_and_types_agree_on_every_field(schema):
    doc = _load(FIXTURES / "passed_cpu_vector_add.json")
    doc["reasons"] = [{"code": "C", "detail": "d", "workload": "w"}]
    doc["guard"]["findings"] = [{"code": "F", "severity": "flag", "detail": "", "line": 3}]
    validator = jsonschema.Draft202012Validator(schema)
    assert _accepts(validator, doc) == (True, True)
    checked = 0
    for name, obj, path in _places(doc):
        definition = _definition(schema, name)
        typed = definition.get("properties", {})
        for key in sorted(set(typed) | set(obj)):
            bad = copy.deepcopy(doc)
            target = bad
            for step in path:
                target = target[step]
            target[key] = _wrong(typed[key]) if key in typed else {"free": "form"}
            expected = (False, False) if key in typed else (True, True)
            assert _accepts(validator, bad) == expected, f"{name or 'result'}.{key}"
            if key in definition.get("required", []):
                del target[key]
                assert _accepts(validator, bad) == (False, False), f"{name}.{key} required"
            checked += 1
    assert checked > 40


@pytest.mark.parametrize(
    ("verdicts", "code"),
    [
        (["PASSED"], 0),
        (["PASSED", "PASSED"], 0),
        (["REJECTED"], 6),
        (["INCORRECT"], 5),
        (["COMPILE_ERROR", "PASSED"], 5),
        (["TIMEOUT", "REJECTED"], 6),
        (["UNSUPPORTED"], 1),
        (["INCONCLUSIVE", "PASSED"], 1),
        (["NODE_FAULT"], 1),
        ([None], 1),  # no verdict: a failed or cancelled run
        (["PASSED", None], 1),
        (["INCORRECT", "NODE_FAULT"], 5),  # a verdict about the kernel outranks a farm outcome
        (["NOT_A_VERDICT"], 1),
        ([], 1),
    ],
)
def test_exit_codes_say_what_happened(verdicts, code):
    from farm.result import exit_code

    assert exit_code(verdicts) == code
