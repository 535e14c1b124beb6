"""Timing on the simulated NPU inside the worker: one call, costed by the in-process model
(npu_sim.measure). The farm's npu-sim times do not come from here but from the trusted replay
of a trace of the call (farm.harness.simreplay); this serves the worker's `time` op."""

from __future__ import annotations

from typing import Any

from farm.harness.timing import Call, MakeInputs, TimingPolicy, Window, capture, harness_torch


class SimFailure(Exception):
    """The simulator refused the call: `status` is the workload status, `code` the reason code."""

    def __init__(self, status: str, code: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail = status, code, detail


class SimTimer:
    """Simulated time is deterministic, so one call is the measurement (std 0): the supervisor
    asks for one window of one call (farm.harness.windows).

    `measure` is the handle `npu_sim.install()` returned before the submission was imported, so
    the submission cannot substitute its own by patching the module afterwards.
    """

    method = "npu-sim-model"

    def __init__(self, measure: Any) -> None:
        self.measure = measure

    def warmup(self, call: Call, make_inputs: MakeInputs, policy: TimingPolicy) -> int:
        return 0

    def window(
        self,
        call: Call,
        make_inputs: MakeInputs,
        start: int,
        calls: int,
        policy: TimingPolicy,
        *,
        keep: bool = True,
    ) -> Window:
        """Simulate calls `start` .. `start + calls - 1`; the report of the first is kept."""
        out = Window(times_ms=[], event_ms=[])
        for i in range(start, start + calls):
            report = self._simulate(call, make_inputs, i)
            out.times_ms.append(report.time_ms)
            out.outputs.append(capture(report.output) if keep else [])
            out.sim = out.sim or report.to_dict()
        out.event_ms = list(out.times_ms)
        return out

    def _simulate(self, call: Call, make_inputs: MakeInputs, index: int) -> Any:
        from farm.hardware import npu_sim

        with harness_torch():
            inputs = make_inputs(index)
        try:
            return self.measure(lambda *xs: call(list(xs)), inputs)
        except npu_sim.SimIntegrityError as exc:
            raise SimFailure(
                "REJECTED", "NPU_SIM_TAMPERING", f"{exc} {getattr(exc, 'findings', '')}"
            ) from None
        except npu_sim.SimLimitExceeded as exc:
            raise SimFailure("RUNTIME_ERROR", "NPU_SIM_LIMIT", str(exc)) from None
