"""What one evaluation is about: the options it was given, the submission, the problem and
suite, the mode, the device it runs on and its seed. Fixed once the evaluation starts; every
step of the judge (farm.harness.supervisor) reads it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from farm.harness import seeds
from farm.harness.budget import LimitPolicy
from farm.harness.pool import WorkerPool
from farm.harness.prestart import Early
from farm.harness.targets import Target
from farm.harness.timing import TimingPolicy
from farm.result import Mode
from farm.sandbox import Limits
from farm.suite.loader import Suite
from farm.suite.model import Problem, Workload


@dataclass
class EvalOptions:
    """What to evaluate and how. `workloads` None = the device's default selection."""

    problem: str
    suite: str = "core-v1"
    device: str = "cpu"
    mode: str = "benchmark"
    hardware: str | None = None
    workloads: list[str] | None = None
    sandbox: str = "auto"
    seed: int | None = None
    baselines: bool = True
    compile_baseline: bool | None = None
    policy: dict[str, Any] = field(default_factory=dict)
    device_index: int = 0
    limits: Limits = field(default_factory=Limits)
    limit_policy: LimitPolicy | None = None  # None: LimitPolicy.from_env()
    pool: WorkerPool | None = None  # warm workers (agents); None starts fresh ones
    early: Early | None = None  # a candidate worker the CLI started ahead (farm.harness.prestart)


@dataclass(frozen=True)
class Case:
    """One evaluation's fixed facts. `base` is its base seed (secret in leaderboard mode, fresh
    when timed: farm.harness.seeds), `fresh` whether it was unknown before the evaluation."""

    opts: EvalOptions
    suite: Suite
    problem: Problem
    mode: Mode
    target: Target
    source: str
    source_path: Path
    base: int | str
    fresh: bool
    limit_policy: LimitPolicy

    @classmethod
    def of(
        cls,
        opts: EvalOptions,
        suite: Suite,
        problem: Problem,
        mode: Mode,
        target: Target,
        source: tuple[str, Path],
    ) -> Case:
        base, fresh = seeds.choose_base(
            leaderboard=mode == Mode.LEADERBOARD, timed=mode != Mode.TEST, given=opts.seed
        )
        limit_policy = opts.limit_policy or LimitPolicy.from_env()
        return cls(opts, suite, problem, mode, target, *source, base, fresh, limit_policy)

    @property
    def timed(self) -> bool:
        return self.mode != Mode.TEST

    @property
    def simulated(self) -> bool:
        return self.target.kind.simulated

    @property
    def policy(self) -> TimingPolicy:
        return self.target.policy(self.opts.policy)

    def seed(self, w: Workload, *labels: object) -> int:
        """The seed of `w`'s inputs for a purpose (`labels`: "check" and a round, "time", ...)."""
        return seeds.derive(self.base, self.problem.name, w.id, *labels)
