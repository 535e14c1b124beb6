"""The simulated time comes from a trusted replay in a fresh process, so tampering with the
simulator inside the process that runs the submission changes nothing, and a forged trace
fails with a clear status.

Each attack plays a submission's `kernel` while the call is recorded here (as in the worker);
each trace is then judged as the supervisor judges it: the reference costed here, the trace
replayed in a bwrap sandbox (`python -m farm.harness.simreplay`), the outputs compared here.
"""

from __future__ import annotations

import copy
import gc
import inspect
import runpy
import sys
import types
from pathlib import Path

import pytest
import torch

from farm.hardware.npu_sim import costmodel
from farm.hardware.npu_sim.record import record_call
from farm.hardware.npu_sim.trace import Recorder, TraceError
from farm.harness import runtime
from farm.harness.simreplay import judge
from farm.suite.loader import load_suite
from tests.hardware.npu_sim import kernels as k

pytestmark = pytest.mark.slow  # a fresh replay process, or real-size workloads

SUITE = load_suite("core-v1")
PROBLEM = SUITE.problem("softmax")
REQUEST = {
    "suite_root": str(PROBLEM.directory.resolve().parent),
    "problem": "softmax",
    "axes": {"M": 24, "N": 256},  # 24 programs: replayed in full
    "dtype": "float32",
    "seed_base": 11,
}


MODULE = runtime.load_file_module(PROBLEM.reference_path, "test_trusted_reference")


def _inputs() -> list[torch.Tensor]:
    return runtime.input_maker(MODULE, REQUEST, torch.device("cpu"))(0)


def _judge(trace: dict, runner) -> dict:
    return judge(PROBLEM, MODULE, _inputs(), trace, runner=runner)


def _honest(x):
    return k.triton_softmax(x)


# -- attacks, run while the call is recorded -----------------------------------------------


def _zero_costs_through_closures(x):
    """Reach the simulator's cost parameters through closures and gc, zero the launch costs."""
    for obj in gc.get_objects():
        if type(obj) is costmodel.CostParams:
            object.__setattr__(obj, "launch_s", 0.0)
            object.__setattr__(obj, "program_s", 0.0)
    for value in inspect.getclosurevars(costmodel.launch_s).globals.values():
        if isinstance(value, costmodel.CostParams):
            object.__setattr__(value, "launch_s", 0.0)
    return _honest(x)


def _swap_report_module(x):
    """Replace the sys.modules entry of the report module with one that reports 1 ns."""
    fake = types.ModuleType("farm.hardware.npu_sim.report")
    fake.build_report = lambda *a, **kw: types.SimpleNamespace(time_ms=1e-6)  # type: ignore[attr-defined]
    sys.modules["farm.hardware.npu_sim.report"] = fake
    return _honest(x)


def _erase_launches_through_frames(x):
    """Walk up to the recorder's frame and drop every recorded step after the work is done."""
    out = _honest(x)
    frame = sys._getframe()
    while frame is not None:
        rec = frame.f_locals.get("rec")
        if isinstance(rec, Recorder):
            rec.steps.clear()
        frame = frame.f_back
    return out


def _erase_launches_through_gc(x):
    out = _honest(x)
    for obj in gc.get_objects():
        if type(obj) is Recorder:
            obj.steps.clear()
    return out


def _cheaper_unchecked_numpy(x):
    """Compute the answer on the host (uncounted) and launch nothing."""
    return torch.from_numpy(torch.softmax(x, -1).numpy().copy())


HACKS = Path(__file__).resolve().parents[2] / "hacks"


def _hack_file(name: str):
    """The kernel of a file of tests/hacks/, imported inside the recorded call."""
    return lambda x: runpy.run_path(str(HACKS / f"{name}.py"))["kernel"](x)


ATTACKS = {
    "zero_costs_through_closures": _zero_costs_through_closures,
    "swap_report_module": _swap_report_module,
    "npu_sim_zero_launch_costs": _hack_file("npu_sim_zero_launch_costs"),
    "npu_sim_swap_report_module": _hack_file("npu_sim_swap_report_module"),
    "erase_launches_through_frames": _erase_launches_through_frames,
    "erase_launches_through_gc": _erase_launches_through_gc,
}


def _record(fn) -> dict:
    saved_modules = dict(sys.modules)
    # type(), not isinstance(): a dead weak proxy among gc's objects raises on isinstance
    saved_params = [(o, dict(vars(o))) for o in gc.get_objects() if type(o) is costmodel.CostParams]
    try:
        trace, _ = record_call(lambda xs: [fn(*xs)], _inputs())
        return trace.to_json()
    finally:
        sys.modules.clear()
        sys.modules.update(saved_modules)
        for obj, fields in saved_params:
            for key, value in fields.items():
                object.__setattr__(obj, key, value)


def _forged(honest: dict, how: str) -> dict:
    trace = copy.deepcopy(honest)
    kernel = next(iter(trace["kernels"].values()))
    if how == "host_escape":
        kernel["source"] = kernel["source"].replace(
            "row = tl.program_id(0)", "row = tl.program_id(0)\n    torch.cuda.synchronize()"
        )
    elif how == "cheaper_kernel":
        kernel["source"] = kernel["source"].replace("e / tl.sum(e, axis=0)", "e")
    if how in ("host_escape", "cheaper_kernel"):
        from farm.hardware.npu_sim.trace import Kernel

        new = Kernel(kernel["name"], kernel["source"], tuple(map(tuple, kernel["helpers"])))
        (old,) = trace["kernels"]
        trace["kernels"] = {new.digest: kernel}
        for step in trace["steps"]:
            if step.get("launch") == old:
                step["launch"] = new.digest
    if how == "smaller_grid":
        for step in trace["steps"]:
            if "launch" in step:
                step["grid"] = [1, 1, 1]
    return trace


FORGERIES = ["host_escape", "cheaper_kernel", "smaller_grid"]


@pytest.fixture(scope="module")
def answers(replay_runner):
    honest = _record(_honest)
    traces = {"honest": honest, **{name: _record(fn) for name, fn in ATTACKS.items()}}
    traces.update({f"forged_{how}": _forged(honest, how) for how in FORGERIES})
    return {name: _judge(trace, replay_runner) for name, trace in traces.items()}


def test_honest_kernel_is_timed_and_checked(answers):
    honest = answers["honest"]
    assert honest["ok"], honest
    check = honest["candidate"]["check"]
    assert check["elements"] == check["of"] == 24 * 256 and not check["sampled"]
    assert honest["candidate"]["time_ms"] > 0 and honest["reference"]["time_ms"] > 0


@pytest.mark.parametrize(
    "attack",
    [
        "zero_costs_through_closures",
        "swap_report_module",
        "npu_sim_zero_launch_costs",
        "npu_sim_swap_report_module",
    ],
)
def test_tampering_with_the_workers_simulator_changes_nothing(answers, attack):
    """The cost is counted in another process: the same time to the last bit."""
    assert answers[attack]["ok"], answers[attack]
    assert answers[attack]["candidate"]["time_ms"] == answers["honest"]["candidate"]["time_ms"]


def test_an_output_made_outside_recorded_work_cannot_be_recorded():
    with pytest.raises(TraceError, match="did not make and that is not an input"):
        _record(_cheaper_unchecked_numpy)


@pytest.mark.parametrize("attack", ["erase_launches_through_frames", "erase_launches_through_gc"])
def test_work_left_out_of_the_trace_is_rejected(answers, attack):
    got = answers[attack]
    assert not got["ok"] and got["status"] == "REJECTED", got
    assert got["code"] == "NPU_SIM_UNCOUNTED_OUTPUT"


def test_a_kernel_with_host_code_is_rejected_before_it_runs(answers):
    got = answers["forged_host_escape"]
    assert (got["ok"], got["status"], got["code"]) == (False, "REJECTED", "NPU_SIM_KERNEL_REJECTED")
    assert "torch" in got["detail"]


def test_a_trace_with_a_cheaper_kernel_gives_wrong_outputs(answers):
    got = answers["forged_cheaper_kernel"]
    assert not got["ok"] and got["status"] == "INCORRECT", got


def test_a_trace_with_a_smaller_grid_leaves_outputs_unwritten(answers):
    got = answers["forged_smaller_grid"]
    assert not got["ok"] and got["code"] == "NPU_SIM_UNCOUNTED_OUTPUT", got


def test_the_replay_gives_bit_identical_times_in_another_process(answers, replay_runner):
    """Another sandbox, another process, another allocation layout: the same time and counts
    (the sample is drawn from the trace's hash; counts are integers in call order)."""
    honest = _record(_honest)
    again = _judge(honest, replay_runner)
    first = answers["honest"]["candidate"]
    assert again["ok"], again
    for key in ("time_ms", "sol_ms", "flops", "hbm_bytes", "per_launch", "model"):
        assert again["candidate"][key] == first[key], key
    assert first["model"] == "npu-sim-v1/cost-1"
