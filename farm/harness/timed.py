"""Timing the candidate (and the baselines) in windows the supervisor sizes and times itself,
re-checking calls it names only after their window ran (farm.harness.timing,
farm.harness.windows); the inputs of every timed call are made here."""

from __future__ import annotations

import random
from typing import Any

import torch

from farm.harness import feed, report
from farm.harness.case import Case
from farm.harness.channel import WorkerProcess
from farm.harness.checks import Checker
from farm.harness.inputs import Inputs
from farm.harness.record import Report, WorkloadRecord, tagged
from farm.harness.sizes import Sizes
from farm.harness.timing import TimingPolicy
from farm.harness.transport import Picks
from farm.harness.windows import WindowDriver
from farm.result import Reason
from farm.suite.model import Workload


class Timer:
    """Drives timings in a worker; the candidate's lands in its workload's record."""

    def __init__(
        self, case: Case, sizes: Sizes, inputs: Inputs, checker: Checker, report: Report
    ) -> None:
        self.case, self.sizes, self.inputs = case, sizes, inputs
        self.checker, self.report = checker, report
        self.rng = random.SystemRandom()  # window sizes and re-checked calls

    def time(self, worker: WorkerProcess, w: Workload, record: WorkloadRecord) -> None:
        """Time the candidate on `w`; a failure or a wrong re-checked call sets the status."""
        seed = self.case.seed(w, "time")
        policy = self.case.policy
        gate = self.case.target.cool_down()
        refs: dict[int, list[torch.Tensor]] = {}  # a picked call's reference, made once

        def reference(index: int) -> list[torch.Tensor]:
            if index not in refs:
                refs[index] = self.inputs.expected(w, seed, index)
            return refs[index]

        def verify(index: int, outputs: list[torch.Tensor]) -> list[Reason]:
            ref = reference(index)
            del refs[index]
            return self.checker.recheck(w, seed, index, outputs, ref)

        driver = self.driver(worker, w, policy, watch=True)
        self.feed(driver, w, seed)
        driver.transport = Picks(self.inputs.transport, reference)
        run = driver.run(self.request(w, policy), verify)
        self.report.phases.move("timing", "correctness", run.verify_s)
        self.report.findings += tagged(run.findings, w.id)
        if run.failure is not None:
            report.set_status(record, [run.failure.error()])
        elif run.errors:
            report.set_status(record, run.errors)
        else:
            report.add_timing(
                record, run.summary(), run.wall_ms, thermal=gate, warmup_ms=policy.warmup_ms
            )

    def driver(
        self, worker: WorkerProcess, w: Workload, policy: TimingPolicy, *, watch: bool
    ) -> WindowDriver:
        return WindowDriver(
            worker=worker,
            policy=policy,
            limits=self.case.limit_policy,
            rng=self.rng,
            call_s=self.checker.call_s.get(w.id, 0.0),
            keep_calls=self.sizes.keep_calls(w),
            pick_bytes=self.sizes.frame_bytes(w, 1),
            watch=self.sizes.gpu_limit_bytes() if watch else None,
            simulated=self.case.simulated,
        )

    def feed(self, driver: WindowDriver, w: Workload, seed: int) -> None:
        """Give `driver` the timed calls' inputs, made here from `seed` (its warm-up's too:
        negative indices), and the most calls one request may carry."""
        make = self.inputs.maker(w, seed)
        first = {-1: make(-1)}  # the warm-up's first call, made once: it sizes the requests
        driver.feed_calls = feed.calls_that_fit(feed.call_bytes(first[-1]))
        driver.feed = lambda indices: self.inputs.payload(
            [first.pop(i) if i in first else make(i) for i in indices]
        )

    def request(self, w: Workload, policy: TimingPolicy) -> dict[str, Any]:
        return {
            **self.sizes.request(w),
            "policy": policy.__dict__,
            "llc_bytes": self.case.target.llc_bytes,
        }
