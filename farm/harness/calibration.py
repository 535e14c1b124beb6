"""The wall-clock rules' yardsticks (farm.harness.reference), taken once nothing else of the
evaluation runs (never while a worker imports), this node's cached ones where it has them: the
check path around a call that does nothing, and, where no eager baseline gives one, the timing
loop around such a call. Before a rule fires they are measured again and the host is looked at
(farm.harness.host_load); a mismatch the host's load explains makes the workload INCONCLUSIVE
(farm.harness.report.host_busy). Simulated times (npu-sim) are not wall-clock times."""

from __future__ import annotations

from farm.harness import baselines, host_load, reference, report
from farm.harness.case import Case
from farm.harness.record import WorkloadRecord
from farm.harness.reference import Yardstick
from farm.harness.sizes import Sizes
from farm.suite.model import Workload


class Calibration:
    """Sets the yardsticks of the timed workloads' records."""

    def __init__(self, case: Case, sizes: Sizes, cache: baselines.BaselineCache | None) -> None:
        self.case, self.sizes, self.cache = case, sizes, cache

    def run(self, timed: list[Workload], records: dict[str, WorkloadRecord]) -> None:
        if self.case.simulated:
            return
        for w in timed:
            record = records[w.id]
            eager = bool(record.baseline_timing.get("eager"))
            check, cached = self._check(w)
            report.set_yardsticks(record, check, None if eager else self._loop(w))
            if not report.wall_rules_fire(record):
                continue
            check, _ = self._check(w, fresh=True)
            report.set_yardsticks(record, check, None if eager else self._loop(w, True))
            now = check.per_call_ms / cached.per_call_ms if cached and cached.per_call_ms else 1.0
            record.host = host_load.sample(now)

    def _check(self, w: Workload, fresh: bool = False) -> tuple[Yardstick, Yardstick | None]:
        """(the check path's yardstick, this node's cached one or None); `fresh`: measured."""
        device, problem = self.case.target.torch_device, self.case.problem
        return reference.cached_yardstick(
            self.cache,
            w.id,
            "yardstick-check",
            lambda: reference.check_yardstick(problem, w, device),
            fresh=fresh,
        )

    def _loop(self, w: Workload, fresh: bool = False) -> Yardstick:
        """The timing loop's yardstick (this node's cached one unless `fresh`)."""
        case = self.case
        args = (case.target.torch_device, case.policy, case.target.llc_bytes)
        keep = self.sizes.keep_calls(w)
        return reference.cached_yardstick(
            self.cache,
            w.id,
            "yardstick-loop",
            lambda: reference.loop_yardstick(case.problem, w, *args, keep),
            fresh=fresh,
        )[0]
