"""The replay's trust boundary: the cheats of tests/hacks/npu_sim_* are caught by the
allow-list of objects, and with that allow-list bypassed the sandbox still contains them; the
scratch-taint cheat is compared; what npu-sim does not simulate is UNSUPPORTED; honest kernels
(module-level constexprs, helpers, online softmax with any BLOCK) pass.

Each trace is recorded here as the worker records it, then judged as the supervisor judges it
(farm.harness.simreplay.judge: reference and comparison here, replay in a bwrap sandbox).
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

from farm.hardware.npu_sim import sandboxed, tritonsrc
from farm.hardware.npu_sim.record import record_call
from farm.hardware.npu_sim.trace import Trace, TraceError
from farm.harness import runtime
from farm.harness.simreplay import judge
from farm.suite.loader import load_suite

pytestmark = pytest.mark.slow  # sandboxed replays

HACKS = Path(__file__).resolve().parents[2] / "hacks"
SUITE = load_suite("core-v1")
ESCAPE_FILE = Path("/tmp/farm-npu-sim-escape.txt")  # what the hack files try to write
EXEC_FILE = Path("/tmp/farm-npu-sim-exec.txt")
SECRET = ("FARM_NPU_SIM_TEST_SECRET", "s3cr3t-4f1c")
# The replay's entry point with the source check switched off inside the sandbox too.
UNCHECKED = [
    "-c",
    "import farm.hardware.npu_sim.tritonsrc as t; t.check_source = lambda kernel: None; "
    "from farm.hardware.npu_sim.serve import main; main()",
]


def _case(problem: str, axes: dict[str, int], dtype: str = "float32"):
    p = SUITE.problem(problem)
    module = runtime.load_file_module(p.reference_path, f"sandbox_{problem}")
    request = {"axes": axes, "dtype": dtype, "seed_base": 5}
    return p, module, runtime.input_maker(module, request, torch.device("cpu"))(0)


SOFTMAX = ("softmax", {"M": 24, "N": 256})
VECTOR_ADD = ("vector_add", {"N": 4096})


def _judge(fn, case, runner) -> tuple[dict, dict]:
    """Record `fn` on the case's inputs and judge the trace; (answer, trace)."""
    problem, module, inputs = _case(*case)
    trace, _ = record_call(lambda xs: list(_outputs(fn(*xs))), inputs)
    doc = trace.to_json()
    return judge(problem, module, inputs, doc, runner=runner), doc


def _outputs(out):
    return out if isinstance(out, (tuple, list)) else (out,)


def _hack(name: str):
    return runpy.run_path(str(HACKS / f"{name}.py"))["kernel"]


@pytest.fixture
def clean_host():
    for path in (ESCAPE_FILE, EXEC_FILE):
        path.unlink(missing_ok=True)
    yield
    for path in (ESCAPE_FILE, EXEC_FILE):
        path.unlink(missing_ok=True)


@pytest.fixture
def bypassed(monkeypatch):
    """The allow-list switched off on both sides (trusted check and the sandbox's compile),
    and a secret in the environment of the process that starts the replay."""
    monkeypatch.setattr(tritonsrc, "check_source", lambda kernel: None)
    monkeypatch.setattr(sandboxed, "REPLAY_ARGS", UNCHECKED)
    monkeypatch.setenv(*SECRET)


ESCAPES = [
    ("npu_sim_tl_inspect_os_escape", SOFTMAX, "tl.core is the module triton.language.core"),
    ("npu_sim_tl_builtins_exec", VECTOR_ADD, "tl.core is the module triton.language.core"),
    ("npu_sim_replace_cost_report", SOFTMAX, "tl.core is the module triton.language.core"),
]


@pytest.mark.parametrize("name, case, why", ESCAPES, ids=[e[0] for e in ESCAPES])
def test_escapes_are_rejected_before_anything_runs(name, case, why, replay_runner, clean_host):
    got, _ = _judge(_hack(name), case, replay_runner)
    assert (got["ok"], got["status"], got["code"]) == (
        False,
        "REJECTED",
        "NPU_SIM_KERNEL_REJECTED",
    ), got
    assert why in got["detail"]
    assert not ESCAPE_FILE.exists() and not EXEC_FILE.exists()


@pytest.mark.parametrize(
    "name, case, path",
    [
        ("npu_sim_tl_inspect_os_escape", SOFTMAX, ESCAPE_FILE),
        ("npu_sim_tl_builtins_exec", VECTOR_ADD, EXEC_FILE),
    ],
)
def test_with_the_allow_list_bypassed_the_sandbox_contains_the_escape(
    name, case, path, replay_runner, clean_host, bypassed, monkeypatch
):
    """The escape runs (its kernel is honest, so the replay passes) and writes only inside the
    sandbox. Positive control: the same trace under the unsandboxed `process` runner writes the
    host file, whose environment dump holds no secret (the replay's environment is clean
    whatever the runner)."""
    got, trace = _judge(_hack(name), case, replay_runner)
    assert got["ok"], got
    assert not path.exists()

    from farm.sandbox import get_runner

    monkeypatch.setenv("FARM_ALLOW_UNSANDBOXED", "1")
    problem, module, inputs = _case(*case)
    control = judge(problem, module, inputs, trace, runner=get_runner("process"))
    assert control["ok"], control
    assert path.exists(), "the escape did not run: the sandboxed case proves nothing"
    assert SECRET[1] not in path.read_text()


def test_a_cost_report_rewritten_inside_the_replay_is_rejected(replay_runner, bypassed):
    """With the allow-list bypassed, zeroing the cost model's overheads inside the sandbox
    gives launches faster than the model's floor for their own counts; the eager baseline,
    costed on the trusted side, is the honest one's to the bit."""
    honest, _ = _judge(lambda x: torch.softmax(x, -1), SOFTMAX, replay_runner)
    got, _ = _judge(_hack("npu_sim_replace_cost_report"), SOFTMAX, replay_runner)
    assert (got["status"], got["code"]) == ("REJECTED", "NPU_SIM_COST_FORGED"), got
    assert got["reference"]["time_ms"] == honest["reference"]["time_ms"]


def test_a_constant_output_after_a_scratch_load_is_compared(replay_runner):
    """At real size (sampled), stores after a load of an uninitialised scratch buffer are
    compared like any other: the constant output is INCORRECT."""
    got, _ = _judge(
        _hack("npu_sim_scratch_taint_constant"), ("vector_add", {"N": 65536}), replay_runner
    )
    assert (got["ok"], got["status"]) == (False, "INCORRECT"), got
    check = got["candidate"]["check"]
    assert check["sampled"] and check["elements"] > 0


def test_an_op_npu_sim_does_not_replay_is_unsupported(replay_runner):
    got, _ = _judge(
        lambda x: torch.logsumexp(x, -1, keepdim=True).neg().add(x).exp(), SOFTMAX, replay_runner
    )
    assert (got["ok"], got["status"], got["code"]) == (False, "UNSUPPORTED", "NPU_SIM_UNSUPPORTED")
    assert "aten.logsumexp" in got["detail"] and "_softmax" in got["detail"]


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def _tuned_add(a_ptr, b_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(
        o_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask
    )


def test_autotune_is_unsupported_when_recorded():
    a, b = torch.randn(256), torch.randn(256)

    def call(xs):
        out = torch.empty_like(xs[0])
        _tuned_add[lambda m: (triton.cdiv(256, m["BLOCK"]),)](xs[0], xs[1], out, 256)
        return [out]

    with pytest.raises(TraceError, match="autotune") as caught:
        record_call(call, [a, b])
    assert caught.value.status == "UNSUPPORTED"


# -- honest kernels ------------------------------------------------------------------------

ROW_BLOCK = tl.constexpr(4)  # a module-level constexpr the kernel names


@triton.jit
def _row_max(x_ptr, row, n, BLOCK: tl.constexpr):
    m = tl.full([BLOCK], -float("inf"), tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.load(x_ptr + row * n + offs, mask=offs < n, other=-float("inf")))
    return tl.max(m, axis=0)


@triton.jit
def _online_softmax(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    """Two passes over column blocks: the row's max (a helper), then its sum; then the store."""
    for r in range(0, ROW_BLOCK):
        row = tl.program_id(0) * ROW_BLOCK + r
        mx = _row_max(x_ptr, row, n, BLOCK)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=-float("inf"))
            acc += tl.exp(x - mx)
        total = tl.sum(acc, axis=0)
        for start in range(0, n, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=-float("inf"))
            tl.store(o_ptr + row * n + offs, tl.exp(x - mx) / total, mask=offs < n)


def _online(block: int):
    def kernel(x):
        out = torch.empty_like(x)
        _online_softmax[(x.shape[0] // 4,)](x, out, x.shape[1], BLOCK=block)
        return out

    return kernel


@pytest.mark.parametrize("block", [16, 32, 64, 128, 256])
def test_an_honest_online_softmax_passes_whatever_its_block(block, replay_runner):
    """Helpers, a module-level constexpr, loops of 2..16 iterations; 64 programs: sampled."""
    got, trace = _judge(_online(block), ("softmax", {"M": 256, "N": 256}), replay_runner)
    assert got["ok"], got
    assert got["candidate"]["check"]["elements"] > 0
    assert Trace.from_json(trace).kernels  # recorded with its helper and its constant
    kernel = next(iter(Trace.from_json(trace).kernels.values()))
    assert kernel.constants == (("ROW_BLOCK", 4),) and kernel.helpers[0][0] == "_row_max"


def test_the_replay_limit_grows_with_the_work_it_runs():
    """Programs run in full count PROGRAM_S each, sampled launches SAMPLED_LAUNCH_S."""
    trace, _ = record_call(lambda xs: [_online(64)(*xs)], [torch.randn(64, 256)])
    budget = sandboxed.ReplayBudget.of(trace)
    assert (budget.programs, budget.sampled_launches) == (16, 0)  # 16 programs: in full
    assert budget.seconds == sandboxed.START_S + sandboxed.FACTOR * sandboxed.PROGRAM_S * 16
    trace, _ = record_call(lambda xs: [_online(64)(*xs)], [torch.randn(4096, 256)])
    budget = sandboxed.ReplayBudget.of(trace)
    assert (budget.programs, budget.sampled_launches) == (0, 1)
    assert budget.seconds < sandboxed.START_S + sandboxed.FACTOR * sandboxed.PROGRAM_S * 16
