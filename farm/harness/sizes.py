"""An evaluation's limits, sized to its workloads (farm.harness.budget.LimitPolicy): the bytes a
reply may carry, the outputs a timing window may keep, the worker's host and device memory."""

from __future__ import annotations

from typing import Any

from farm.harness.case import Case
from farm.suite.model import Workload


class Sizes:
    """The limits of one evaluation's workers and frames. The device memory limit grows as the
    references' peaks are measured (`note_peak`)."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.policy = case.limit_policy
        self.workloads: list[Workload] = []  # those this evaluation runs
        self.ref_peak: dict[str, int] = {}  # workload id -> the reference's device peak (bytes)

    def note_peak(self, w: Workload, nbytes: int) -> None:
        """The reference's device memory peak on `w` (bytes), as the trusted side measured it."""
        self.ref_peak[w.id] = max(self.ref_peak.get(w.id, 0), nbytes)

    def request(self, w: Workload) -> dict[str, Any]:
        """What every request about `w` says (no seed: the inputs come as data)."""
        problem = self.case.problem
        return {
            "axes": w.axes,
            "dtype": w.dtype,
            "output_nbytes": [s.nbytes(w.axes, w.dtype) for s in problem.outputs],
            "gpu_memory_bytes": self.gpu_limit_bytes(),
        }

    def frame_bytes(self, w: Workload, calls: int) -> int:
        """The most tensor bytes a reply about `calls` calls of `w` may carry."""
        try:
            nbytes = sum(s.nbytes(w.axes, w.dtype) for s in self.case.problem.outputs)
        except (KeyError, ValueError, TypeError):
            return self.case.opts.limits.output_bytes  # outputs the spec cannot size (imports)
        return self.policy.frame_bytes(nbytes, max(calls, 1))

    def sandbox_bytes(self, w: Workload) -> int:
        """What the worker's host memory limit is sized by: the workload's bytes on GPUs (their
        memory is watched on the device), at float32 width on CPU and npu-sim."""
        if self.case.target.kind.gpu:
            return self.workload_bytes(w)
        try:
            return self.case.problem.host_bytes(w)
        except (KeyError, ValueError, TypeError):
            return 0

    def keep_calls(self, w: Workload) -> int:
        """The most calls of a timing window of `w` whose outputs may be kept at once."""
        out_bytes = self.frame_bytes(w, 1) - self.policy.output_slack
        return self.policy.keep_calls(out_bytes, self.workload_bytes(w))

    def workload_bytes(self, w: Workload) -> int:
        try:
            return self.case.problem.device_bytes(w)
        except (KeyError, ValueError, TypeError):
            return 0

    def gpu_limit_bytes(self) -> int | None:
        """Device memory (bytes) the worker may hold during this evaluation, None off GPUs: the
        largest over its workloads of the stated factor times the larger of the workload's
        inputs + outputs + weights (Problem.device_bytes) and the reference's own peak (input
        generation included) as the trusted side measured it, plus the floor and a timing
        window's kept outputs (LimitPolicy.gpu_memory_bytes). One limit for the whole
        evaluation, as for host memory: a process's device memory does not shrink between
        workloads (the allocator's cache, a library's workspaces), so a limit per workload would
        charge a small workload for the large one before it. It only grows, as the references'
        peaks are measured."""
        if not self.case.target.kind.gpu:
            return None
        return max(
            (
                self.policy.gpu_memory_bytes(self.workload_bytes(w), self.ref_peak.get(w.id, 0))
                for w in self.workloads
            ),
            default=self.policy.gpu_memory_bytes(0),
        )
