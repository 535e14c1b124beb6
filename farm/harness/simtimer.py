"""Timing on the simulated NPU inside the worker: one call, costed by the in-process model
(npu_sim.measure). The farm's npu-sim times do not come from here but from the trusted replay
of a trace of the call (farm.harness.simreplay); this serves the worker's `time` op."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from farm.harness.timing import Call, MakeInputs, TimingPolicy, TimingRun


class SimFailure(Exception):
    """The simulator refused the call: `status` is the workload status, `code` the reason code."""

    def __init__(self, status: str, code: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail = status, code, detail


class SimTimer:
    """Simulated time is deterministic, so one call is the measurement (std 0).

    `measure` is the handle `npu_sim.install()` returned before the submission was imported, so
    the submission cannot substitute its own by patching the module afterwards.
    """

    def __init__(self, measure: Any) -> None:
        self.measure = measure

    def run(
        self,
        call: Call,
        make_inputs: MakeInputs,
        policy: TimingPolicy,
        recheck: Collection[int] = (),
    ) -> TimingRun:
        from farm.hardware import npu_sim

        inputs = make_inputs(0)
        try:
            report = self.measure(lambda *xs: call(list(xs)), inputs)
        except npu_sim.SimIntegrityError as exc:
            raise SimFailure(
                "REJECTED", "NPU_SIM_TAMPERING", f"{exc} {getattr(exc, 'findings', '')}"
            ) from None
        except npu_sim.SimLimitExceeded as exc:
            raise SimFailure("RUNTIME_ERROR", "NPU_SIM_LIMIT", str(exc)) from None
        run = TimingRun(
            times_ms=[report.time_ms], event_ms=[report.time_ms], method="npu-sim-model"
        )
        run.windows = [report.time_ms]
        run.rechecks[0] = report.output
        run.sim = report.to_dict()
        return run
