"""The supervisor never crashes on what a worker does: every status a worker can claim, every
way it can end, and every malformed frame ends in a valid result document whose status the
trusted side chose, with one short cause.

The worker here is tests/harness/scripted_worker.py, run by the plain process runner (the
sandbox is not what is under test)."""

from __future__ import annotations

import json
import time

import pytest

from farm.harness import channel, replies
from farm.harness.budget import LimitPolicy
from farm.harness.supervisor import evaluate
from farm.result import validate

SOURCE = "def kernel(a, b):\n    return a + b\n"
FAST = LimitPolicy(call_floor_s=2.0, compile_s=1.0, time_factor=5.0)
OK_LOAD = {"reply": {"ok": True, "form": "native"}}
HONEST_CHECK = {"reply": {"ok": True}, "outputs": "reference"}


@pytest.fixture
def scripted(tmp_path, monkeypatch):
    """Evaluate vector_add with the scripted worker; returns (document, seconds)."""
    monkeypatch.setenv("FARM_ALLOW_UNSANDBOXED", "1")

    def run(script: dict, mode: str = "test") -> tuple[dict, float]:
        path = tmp_path / "script.json"
        path.write_text(json.dumps(script))
        monkeypatch.setattr(
            channel, "WORKER_ARGS", ["-m", "tests.harness.scripted_worker", str(path)]
        )
        src = tmp_path / "k.py"
        src.write_text(SOURCE)
        started = time.monotonic()
        doc = evaluate(
            src,
            problem="vector_add",
            device="cpu",
            mode=mode,
            sandbox="process",
            workloads=["small-4k"],
            baselines=False,
            limit_policy=FAST,
        ).to_json()
        return validate(doc), time.monotonic() - started

    return run


def _codes(doc: dict) -> list[str]:
    return [r["code"] for r in doc["reasons"]]


@pytest.mark.parametrize(
    ("script", "verdict", "code"),
    [
        # statuses a failed reply may claim: only failing ones count, anything else is the
        # worker's own failure
        (
            {"load": {"reply": {"ok": False, "status": "COMPILE_ERROR", "detail": "x"}}},
            "COMPILE_ERROR",
            "COMPILE_ERROR",
        ),
        (
            {"load": {"reply": {"ok": False, "status": "HARNESS_ERROR", "detail": "x"}}},
            "RUNTIME_ERROR",
            "WORKER_ERROR",
        ),
        ({"load": {"reply": {"ok": False, "status": "PASSED"}}}, "RUNTIME_ERROR", "WORKER_ERROR"),
        # a kernel that fails to build at its first launch (Triton, torch.compile) is the same
        # failure as one that fails at import
        (
            {"check": {"reply": {"ok": False, "status": "COMPILE_ERROR", "detail": "x"}}},
            "COMPILE_ERROR",
            "COMPILE_ERROR",
        ),
        (
            {"check": {"reply": {"ok": False, "status": "PASSED", "detail": "all good"}}},
            "RUNTIME_ERROR",
            "WORKER_ERROR",
        ),
        ({"check": {"reply": {"ok": False, "status": "SKIPPED"}}}, "RUNTIME_ERROR", "WORKER_ERROR"),
        (
            {"check": {"reply": {"ok": False, "status": "INCORRECT", "detail": "tuple"}}},
            "INCORRECT",
            "INCORRECT",
        ),
        (
            {"check": {"reply": {"ok": False, "status": "REJECTED", "code": "NPU_SIM_TAMPERING"}}},
            "REJECTED",
            "NPU_SIM_TAMPERING",
        ),
        (
            {
                "check": {
                    "reply": {
                        "ok": False,
                        "status": "RUNTIME_ERROR",
                        "detail": "torch.OutOfMemoryError: CUDA out of memory",
                    }
                }
            },
            "RUNTIME_ERROR",
            "MEMORY_LIMIT",
        ),
        # success claimed without outputs the supervisor could check
        ({"check": {"reply": {"ok": True}}}, "INCORRECT", "OUTPUT_COUNT"),
        # malformed replies
        ({"load": {"reply": {"ok": "yes"}}}, "RUNTIME_ERROR", "BAD_REPLY"),
        ({"load": {"reply": {"ok": True}}}, "RUNTIME_ERROR", "BAD_REPLY"),
        (
            {"check": {"reply": {"ok": True, "inputs_after": "a"}}},
            "RUNTIME_ERROR",
            "BAD_REPLY",
        ),
        ({"check": {"reply": {"ok": True, "findings": "none"}}}, "RUNTIME_ERROR", "BAD_REPLY"),
        # streams that are not frames, and workers that end
        ({"check": {"raw": "garbage that is no frame"}}, "RUNTIME_ERROR", "PROTOCOL_ERROR"),
        ({"load": {"raw": "FARM1\x00" + "\xff" * 8}}, "RUNTIME_ERROR", "PROTOCOL_ERROR"),
        ({"check": {"exit": 3}}, "RUNTIME_ERROR", "WORKER_DIED"),
        ({"check": {"signal": 9}}, "RUNTIME_ERROR", "WORKER_DIED"),
        ({"load": {"exit": 0}}, "COMPILE_ERROR", "WORKER_DIED"),
    ],
)
def test_every_worker_answer_becomes_a_document(scripted, script, verdict, code):
    doc, _ = scripted(script)
    assert doc["verdict"] == verdict, doc["reasons"]
    assert code in _codes(doc)
    assert {w["status"] for w in doc["workloads"]} <= {
        "INCORRECT",
        "RUNTIME_ERROR",
        "TIMEOUT",
        "REJECTED",
    }


def test_a_hang_ends_at_the_workload_limit_with_a_timeout_naming_it(scripted):
    doc, seconds = scripted({"check": {"hang": True}})
    assert doc["verdict"] == "TIMEOUT"
    (timeout,) = [r for r in doc["reasons"] if r["code"] == "TIMEOUT"]
    assert "within its limit of" in timeout["detail"]
    assert seconds < 15  # FAST: 2 s floor + 1 s compile allowance + 5 x the reference


def test_an_announced_giant_tensor_is_refused_before_it_is_read(scripted):
    doc, seconds = scripted({"check": {"announce_bytes": 5 << 30}})
    assert doc["verdict"] == "RUNTIME_ERROR"
    detail = next(r["detail"] for r in doc["reasons"] if r["code"] == "PROTOCOL_ERROR")
    assert "more than" in detail and seconds < 30


def test_a_huge_detail_is_cut_before_it_is_stored(scripted):
    doc, _ = scripted(
        {"check": {"reply": {"ok": False, "status": "RUNTIME_ERROR", "detail": "x" * 15_000_000}}}
    )
    assert max(len(r["detail"]) for r in doc["reasons"]) <= replies.MAX_TEXT + 40
    assert len(json.dumps(doc)) < 100_000


@pytest.mark.parametrize(
    ("script", "verdict", "code"),
    [
        (
            {"window": {"reply": {"ok": True, "times_ms": [float("nan")]}}},
            "RUNTIME_ERROR",
            "BAD_REPLY",
        ),
        ({"window": {"reply": {"ok": True, "times_ms": []}}}, "RUNTIME_ERROR", "BAD_REPLY"),
        ({"window": {"reply": {"ok": True, "times_ms": [-1.0]}}}, "RUNTIME_ERROR", "BAD_REPLY"),
        # one time for a window the supervisor sized at many calls
        ({"window": {"reply": {"ok": True, "times_ms": [0.5]}}}, "RUNTIME_ERROR", "BAD_REPLY"),
        ({"time": {"reply": {"ok": False, "status": "PASSED"}}}, "RUNTIME_ERROR", "WORKER_ERROR"),
        # picked outputs that are not the calls asked for
        (
            {"picks": {"reply": {"ok": True, "calls": [0], "counts": [1]}}},
            "RUNTIME_ERROR",
            "BAD_REPLY",
        ),
        # the same (first) call's answer for every pick: checked against the picked call
        ({"picks": {"reply": {"ok": True}, "outputs": "first"}}, "INCORRECT", "RECHECK_FAILED"),
    ],
)
def test_timing_replies_are_checked(scripted, script, verdict, code):
    doc, _ = scripted({"load": OK_LOAD, "check": HONEST_CHECK, **script}, mode="benchmark")
    assert doc["verdict"] == verdict, doc["reasons"]
    assert code in _codes(doc), doc["reasons"]


@pytest.mark.quiet_host
def test_a_forged_time_fails_the_trusted_wall_clock_of_its_windows(scripted):
    """Calls that take 200 ms reported at 1 us each: no baseline is timed (baselines=False), the
    reply calls its times simulated, and the supervisor still holds them against its own clock
    around each window it sized and its own calibration of the timing loop's cost per call."""
    warmup = {"ok": True, "warmup_calls": 2, "method": "npu-sim-model"}
    time_reply = {"reply": warmup, "sleep": 0.4}  # two calls of 200 ms
    forged = {"reply": {"ok": True}, "per_call_ms": 0.001, "sleep_per_call": 0.2}
    doc, _ = scripted(
        {"load": OK_LOAD, "check": HONEST_CHECK, "time": time_reply, "window": forged},
        mode="benchmark",
    )
    assert doc["verdict"] == "REJECTED", json.dumps(doc["workloads"][0])
    (finding,) = [f for f in doc["guard"]["findings"] if f["code"] == "WALL_CLOCK_MISMATCH"]
    assert "unaccounted" in finding["detail"]

    # the control: the same wall time, owned up to
    honest = {**forged, "per_call_ms": 200.0}
    doc, _ = scripted(
        {"load": OK_LOAD, "check": HONEST_CHECK, "time": time_reply, "window": honest},
        mode="benchmark",
    )
    assert doc["verdict"] == "PASSED", (doc["guard"]["findings"], doc["workloads"][0]["timing"])
    timing = doc["workloads"][0]["timing"]
    assert timing["harness_overhead_ms"] >= 0
    assert 3 <= len(timing["rechecked"]) <= len(timing["windows"]) + 2
    # 200 ms calls against a 1.5 s budget: the windows end within the budget and its 10 %
    assert timing["wall_ms_outside"] - timing["warmup_wall_ms"] <= 1.1 * 1500


def test_kernel_build_failures_are_compile_errors_wherever_raised():
    import ast

    from triton.compiler.errors import CompilationError

    from farm.harness.worker import _is_compile_error

    class Late(CompilationError):  # a subclass, as Triton's own errors are
        pass

    assert _is_compile_error(CompilationError("src", ast.parse("x").body[0], "no such op"))
    assert _is_compile_error(Late(None, ast.parse("x").body[0]))
    assert not _is_compile_error(RuntimeError("CUDA error: an illegal memory access"))


def test_an_honest_script_passes(scripted):
    """The control: the same harness with honest answers gives PASSED."""
    doc, _ = scripted({"load": OK_LOAD, "check": HONEST_CHECK})
    assert doc["verdict"] == "PASSED", doc["reasons"]


def test_a_load_failure_is_reported_once_not_per_workload(scripted, tmp_path):
    doc, _ = scripted(
        {
            "load": {
                "reply": {
                    "ok": False,
                    "status": "COMPILE_ERROR",
                    "detail": "Traceback: SyntaxError at line 3",
                }
            }
        }
    )
    assert sum("SyntaxError" in r["detail"] for r in doc["reasons"]) == 1
