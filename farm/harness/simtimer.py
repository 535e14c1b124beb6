"""Timing on the simulated NPU: one call costed by the deterministic model (farm.hardware.npu_sim)."""

from __future__ import annotations

from farm.harness.timing import Call, MakeInputs, TimingPolicy, TimingRun


class SimTimer:
    """Simulated time is deterministic, so one call is the measurement (std 0)."""

    def run(
        self,
        call: Call,
        make_inputs: MakeInputs,
        policy: TimingPolicy,
        recheck: set[int] = frozenset(),
    ) -> TimingRun:  # type: ignore[assignment]
        from farm.hardware import npu_sim

        inputs = make_inputs(0)
        outputs, report = npu_sim.measure(call, inputs)
        run = TimingRun(
            times_ms=[report.time_ms], event_ms=[report.time_ms], method="npu-sim-model"
        )
        run.windows = [report.time_ms]
        run.rechecks[0] = outputs
        run.sim = report.to_dict() if hasattr(report, "to_dict") else None
        return run
