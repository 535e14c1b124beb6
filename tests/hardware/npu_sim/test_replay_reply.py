"""What the trusted side takes from the replay's and the worker's answers: only what it checks
itself. The replay's reply is made here by the replay's own code (farm.hardware.npu_sim.serve,
in this process, no sandbox) and then altered as an escaped kernel could alter it.
"""

from __future__ import annotations

import pytest
import torch

from farm.hardware.npu_sim import sandboxed, serve
from farm.hardware.npu_sim.record import record_call
from farm.harness import simreplay
from farm.harness.channel import WorkerDied
from farm.sandbox import get_runner
from farm.suite.loader import load_suite
from tests.hardware.npu_sim import kernels as k

PROBLEM = load_suite("core-v1").problem("vector_add")


@pytest.fixture(scope="module")
def replayed():
    """(trace, inputs, reply header, reply tensors) of an honest add of 4 programs."""
    inputs = [torch.randn(4096), torch.randn(4096)]
    trace, _ = record_call(lambda xs: [k.triton_add(*xs)], inputs)
    header = {"trace": trace.to_json(), "seed": 1, "max_launches": 16}
    reply, tensors = serve.answer(header, inputs)
    assert reply["ok"], reply
    return trace, inputs, reply, tensors


def test_an_honest_reply_is_read_as_sent(replayed):
    trace, _, reply, tensors = replayed
    got = sandboxed.read_reply(reply, tensors, trace)
    assert got.ok and not got.sampled and got.produced == [None]


def test_a_replay_cannot_call_its_outcome_unsupported(replayed):
    """UNSUPPORTED is the farm's outcome, never a verdict: the replay's claim is a failure."""
    trace = replayed[0]
    claim = {"ok": False, "status": "UNSUPPORTED", "code": "NPU_SIM_LIMIT", "detail": "cap"}
    got = sandboxed.read_reply(claim, [], trace)
    assert (got.ok, got.status) == (False, "RUNTIME_ERROR")


def test_a_replay_that_says_it_produced_nothing_is_compared_in_full(replayed):
    """No launch of the trace could be sampled: every element is compared, whatever the
    replay says it produced (here: nothing, beside an output of zeros)."""
    trace, inputs, reply, _ = replayed
    forged = {**reply, "sampled": True, "produced": [0]}
    nothing = torch.zeros(0, dtype=torch.int64)
    got = sandboxed.read_reply(forged, [torch.zeros(4096), nothing], trace)
    assert got.ok and not got.sampled
    errors, check = simreplay._check(PROBLEM, got, [inputs[0] + inputs[1]])
    assert errors and check["elements"] == check["of"] == 4096


def test_a_report_that_leaves_programs_out_is_a_bad_answer(replayed):
    trace, _, reply, tensors = replayed
    report = {**reply["report"]}
    report["per_launch"] = [{**r, "programs": 1} for r in report["per_launch"]]
    got = sandboxed.read_reply({**reply, "report": report}, tensors, trace)
    assert (got.ok, got.status) == (False, "RUNTIME_ERROR")
    assert "every program" in got.detail


def test_a_trace_past_the_launch_cap_is_unsupported_before_it_runs(replayed):
    trace = replayed[0]
    got, failure = simreplay.checked_trace(trace.to_json(), max_launches=len(trace.steps) - 1)
    assert got is None
    assert (failure["status"], failure["code"]) == ("UNSUPPORTED", "NPU_SIM_LIMIT")
    got, failure = simreplay.checked_trace(trace.to_json(), max_launches=len(trace.steps))
    assert got is not None and failure == {}


@pytest.mark.parametrize(
    "died, status",
    [
        (WorkerDied("TIMEOUT", "t", "TIMEOUT", "wall_seconds"), "UNSUPPORTED"),  # this side's
        (WorkerDied("TIMEOUT", "t", "TIMEOUT", "cpu_seconds"), "RUNTIME_ERROR"),  # its signal
        (WorkerDied("RUNTIME_ERROR", "exit status 1", "WORKER_DIED"), "RUNTIME_ERROR"),
    ],
)
def test_only_a_limit_this_side_enforced_is_the_simulators(replayed, died, status):
    budget = sandboxed.ReplayBudget.of(replayed[0])
    got = sandboxed._died(died, budget)
    assert (got.ok, got.status) == (False, status)


# The replay's entry point replaced: one that ends before its greeting, one that ends after it.
NEVER_GREETS = ["-c", "import sys; sys.exit(3)"]
DIES_AFTER_GREETING = [
    "-c",
    "import sys; from farm.harness import protocol; protocol.recv(sys.stdin.buffer); "
    "protocol.send(sys.stdout.buffer, {'op': 'setup', 'ok': True}); sys.exit(3)",
]


@pytest.mark.parametrize(
    "args, status", [(NEVER_GREETS, "NODE_FAULT"), (DIES_AFTER_GREETING, "RUNTIME_ERROR")]
)
def test_a_replay_that_never_started_is_the_nodes_fault(replayed, monkeypatch, args, status):
    """Before its greeting nothing of the submission has reached the replay: its end there is
    the node's fault; after it, the kernel's (the trace was sent)."""
    trace, inputs, _, _ = replayed
    monkeypatch.setenv("FARM_ALLOW_UNSANDBOXED", "1")
    monkeypatch.setattr(sandboxed, "REPLAY_ARGS", args)
    got = sandboxed.run_sandboxed(
        trace,
        inputs,
        seed=1,
        runner=get_runner("process"),
        budget=sandboxed.ReplayBudget.of(trace),
        max_launches=16,
    )
    assert (got.ok, got.status) == (False, status), got.detail


AUTOTUNED = """
import triton

@triton.autotune(configs=[], key=["n"])
@triton.jit
def add(a, b, n):
    pass
"""


@pytest.mark.parametrize(
    "source, believed",
    [(AUTOTUNED, True), ("import triton\n\n@triton.jit\ndef add(a):\n    pass\n", False)],
)
def test_the_workers_unsupported_is_believed_only_of_an_autotuning_source(source, believed):
    from farm.harness import replies

    header = {"ok": False, "status": "UNSUPPORTED", "detail": "autotune'd"}
    got = simreplay.worker_unsupported(replies.trace(header), source)
    assert (got is not None) == believed
    if got is not None:
        assert got["status"] == "UNSUPPORTED"
    assert simreplay.worker_unsupported(replies.trace({"ok": True}), AUTOTUNED) is None


def test_an_unbelieved_unsupported_is_a_failure_of_the_kernel():
    from farm.harness import replies

    failure = replies.failure({"ok": False, "status": "UNSUPPORTED", "detail": "x"})
    assert failure is not None and failure.status.value == "RUNTIME_ERROR"


@pytest.mark.parametrize("op", ["aten.add.bogus", "aten.add.__class__"])
def test_an_op_that_is_no_overload_is_the_traces_failure(op):
    """The trace is the worker's: a name that is not an overload is RUNTIME_ERROR, never an
    exception out of the supervisor (a crash there is the farm's failure, retried free)."""
    inputs = [torch.randn(64), torch.randn(64)]
    trace, _ = record_call(lambda xs: [xs[0] + xs[1]], inputs)
    doc = trace.to_json()
    doc["steps"] = [{**s, "op": op} for s in doc["steps"]]
    got, failure = simreplay.checked_trace(doc, max_launches=16)
    assert got is None and (failure["status"], failure["code"]) == (
        "RUNTIME_ERROR",
        "NPU_SIM_TRACE",
    )


@pytest.mark.parametrize("body", ["x = " + "-" * 200_000 + "1", "x = " + "1+" * 30_000 + "1"])
def test_a_kernel_source_too_deep_to_parse_is_rejected(replayed, body):
    doc = replayed[0].to_json()
    for kernel in doc["kernels"].values():
        kernel["source"] = f"def {kernel['name']}(a):\n    {body}\n"
    got, failure = simreplay.checked_trace(doc, max_launches=16)
    assert got is None and failure["code"] == "NPU_SIM_KERNEL_REJECTED", failure


def _grid(doc, grid):
    for step in doc["steps"]:
        if "grid" in step:
            step["grid"] = grid


@pytest.mark.parametrize(
    "forge",
    [
        lambda d: _grid(d, [-5, 1, 1]),  # sized the replay's limits below zero
        lambda d: _grid(d, [10**30, 1, 1]),
        lambda d: d["outputs"][0].update(dtype="Tensor"),  # torch.Tensor, not a dtype
        lambda d: d["outputs"][0].update(shape=[-(10**12)]),
        lambda d: d["buffers"].__setitem__(0, -(10**12)),
    ],
    ids=["negative-grid", "huge-grid", "dtype-Tensor", "negative-shape", "negative-buffer"],
)
def test_sizes_the_replay_cannot_take_are_the_traces_failure(replayed, forge):
    """What the replay's limits are sized from is checked before they are: a forged size is
    RUNTIME_ERROR, never an exception out of the supervisor."""
    doc = replayed[0].to_json()
    forge(doc)
    got, failure = simreplay.checked_trace(doc, max_launches=16)
    assert got is None
    assert (failure["status"], failure["code"]) == ("RUNTIME_ERROR", "NPU_SIM_TRACE"), failure


@pytest.mark.parametrize(
    "field, value",
    [
        ("inputs_written", [7]),
        ("outputs_short", [-1]),
        ("inputs_written", [True]),
        ("sim_wall_s", float("nan")),
        ("check_wall_s", -1.0),
        ("sim_wall_s", "3"),
    ],
)
def test_the_replays_notes_about_itself_are_checked(replayed, field, value):
    trace, _, reply, tensors = replayed
    got = sandboxed.read_reply({**reply, field: value}, tensors, trace)
    assert (got.ok, got.status, got.code) == (False, "RUNTIME_ERROR", "NPU_SIM_REPLAY")


def test_a_produced_element_named_twice_is_compared_once(replayed):
    """A sampled trace's check says how many elements it compared: repeats do not count."""
    trace, inputs, _, _ = replayed
    doc = trace.to_json()
    _grid(doc, [64, 1, 1])  # 64 programs: a launch that may be sampled
    big = trace.from_json(doc)
    header = {
        "ok": True,
        "report": {
            "time_ms": 1.0,
            "per_launch": [
                {
                    "kind": "triton",
                    "grid": [64, 1, 1],
                    "programs": 64,
                    "read_bytes": 0,
                    "write_bytes": 0,
                    "time_ms": 1.0,
                    "name": "_add",
                }
            ],
        },
        "sampled": True,
        "produced": [0],
        "inputs_written": [],
        "outputs_short": [],
        "sim_wall_s": 0.0,
        "check_wall_s": 0.0,
    }
    out = inputs[0] + inputs[1]
    got = sandboxed.read_reply(header, [out, torch.zeros(4096, dtype=torch.int64)], big)
    assert got.ok and got.sampled, got.detail
    _, check = simreplay._check(PROBLEM, got, [out])
    assert (check["elements"], check["of"]) == (1, 4096)
