"""Correctness: checked calls of the candidate on inputs the trusted side made, compared here
with the reference's outputs (farm.harness.correctness); inputs the call changed are found
against what was sent. A round that fails ends the workload's checks."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from farm.harness import correctness, cudaipc, feed, replies, report
from farm.harness.case import Case
from farm.harness.channel import WorkerProcess
from farm.harness.inputs import Inputs, Made
from farm.harness.record import Checks, Report, WorkloadRecord, tagged
from farm.harness.reference import checker
from farm.harness.sizes import Sizes
from farm.result import Mode, Reason
from farm.suite.model import Workload

ROUNDS = {Mode.TEST: 3, Mode.BENCHMARK: 3, Mode.LEADERBOARD: 5, Mode.PROFILE: 3}
Check = Callable[[Sequence[torch.Tensor]], list[str]]


class Checker:
    """Checks the candidate's calls. `call_s`: the trusted wall time of a workload's last
    checked call (s), the yardstick of its timing's first limits."""

    def __init__(self, case: Case, sizes: Sizes, inputs: Inputs, report: Report) -> None:
        self.case, self.sizes, self.inputs, self.report = case, sizes, inputs, report
        self.call_s: dict[str, float] = {}

    def check(self, worker: WorkerProcess, w: Workload) -> WorkloadRecord:
        """`w` checked over its rounds: its record, PASSED or with the first round's errors."""
        errors: list[Reason] = []
        stats: dict[str, float] = {}
        walls_ms: list[float] = []  # each passed round's wall (the check-wall rule)
        rounds = ROUNDS[self.case.mode]
        r = 0
        while r < rounds:
            seed = self.case.seed(w, "check", r)
            made = self.inputs.checked(w, seed)
            try:
                reply, outputs, modified = self._call(worker, w, made, first=r == 0)
            except cudaipc.IpcError as exc:
                self.inputs.transport.to_pipe(str(exc))  # this round again, through the pipe
                self.inputs.ahead[(w.id, seed)] = made
                continue
            self.report.findings += tagged(reply.findings, w.id)
            check = checker(self.case.problem, w, seed, 0, self.case.target.torch_device)
            errors, passed = self.verify(reply.failure, modified, outputs, made.ref, check)
            if reply.failure is not None and reply.failure.compile:
                self.report.compile_error = True  # a kernel built at its first launch
            if errors:
                break
            stats = passed
            walls_ms.append(self.call_s[w.id] * 1000)
            r += 1
        record = WorkloadRecord.new(self.case.problem, w, report.status_of(errors), errors)
        record.checks = Checks(rounds if not errors else r + 1, stats, walls_ms)
        return record

    def _call(
        self, worker: WorkerProcess, w: Workload, made: Made, *, first: bool
    ) -> tuple[replies.CheckReply, list[torch.Tensor], list[int]]:
        """One checked call of the candidate on the inputs made here: its reply, its outputs,
        which the trusted side now owns (copied on the device, or read from the pipe), and the
        inputs the call changed, decided here against what was sent. The reference's time on
        the same inputs is the yardstick of the call's time limit."""
        timeout = self.case.limit_policy.call_seconds(made.ref_s, first=first)
        payload = self.inputs.payload([made.inputs], keep=True)
        request = {"op": "check", **self.sizes.request(w), **payload.fields}
        if self.inputs.transport.on_device:
            request["outputs"] = "ipc"
        started = time.perf_counter()
        header, tensors = worker.request(
            request,
            timeout=timeout,
            max_bytes=self.sizes.frame_bytes(w, 1) + payload.nbytes,
            watch=self.sizes.gpu_limit_bytes(),
            tensors=payload.tensors,
        )
        self.call_s[w.id] = time.perf_counter() - started
        reply = replies.check(header)
        after = replies.inputs_after(header, tensors, len(payload.sent[0]))
        kept = tensors[: len(tensors) - len(after)]
        outputs = self.inputs.transport.received(reply.outputs, kept, made.ref)
        return reply, outputs, feed.modified_inputs(payload, 0, after)

    def verify(
        self,
        failure: replies.Failure | None,
        inputs_modified: list[int],
        outputs: list[torch.Tensor],
        ref: list[torch.Tensor],
        check: Check | None = None,
    ) -> tuple[list[Reason], dict[str, float]]:
        """(the call's errors, its error statistics): the worker's failure, wrong outputs, or
        inputs it changed that the problem does not let it write."""
        if failure is not None:
            return [failure.error()], {}
        problem = self.case.problem
        errors, stats = correctness.compare(
            outputs, ref, problem, device=self.case.target.torch_device, check=check
        )
        writable = set(problem.extra.get("writable_inputs", ()))  # destination buffers
        inputs_modified = [i for i in inputs_modified if i not in writable]
        if errors or not inputs_modified:
            return errors, stats
        names = [problem.inputs[i].name for i in inputs_modified if i < len(problem.inputs)]
        detail = f"the kernel modified its input(s) {', '.join(names)}; inputs are read-only"
        return [Reason("INPUT_MODIFIED", detail)], stats

    def recheck(
        self, w: Workload, seed: int, index: int, outputs: list[torch.Tensor], ref: Any
    ) -> list[Reason]:
        """A timed call's outputs against its reference: RECHECK_FAILED when they differ."""
        check = checker(self.case.problem, w, seed, index, self.case.target.torch_device)
        errors, _ = self.verify(None, [], outputs, ref, check)
        if not errors:
            return []
        detail = "; ".join(e.detail for e in errors)
        return [Reason("RECHECK_FAILED", f"timed call {index} returned a wrong result: {detail}")]
