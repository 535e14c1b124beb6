"""Limits sized to the workload: how much memory, time and output an evaluation may use.

A flat limit is either too tight for the largest problem or far too loose for the smallest (a
12 GiB allocation or a 10-minute hang in a 64x256 softmax). Every limit here is a floor plus a
stated factor times what the workload itself needs:
- memory: factor x (inputs + outputs + the reference's own peak), plus the floor an interpreter
  with torch needs (host memory for CPU devices; device memory, watched from outside, on GPUs);
- time: the trusted side times the reference on each workload's inputs itself; a candidate call
  may take factor x that plus a floor, the first call of a workload also a compile allowance
  (Triton JIT, torch.compile), and the timing phase its policy's budget plus that per call;
- output: what the workload's outputs can hold, for the calls the supervisor asks to see.

Operators override the factors and floors per node through the environment (`LimitPolicy.from_env`
names each variable; .env.example documents them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from farm.sandbox.limits import GiB, Limits, MiB

if TYPE_CHECKING:  # sizing a worker's limits needs no torch (farm.harness.prestart)
    from farm.harness.timing import TimingPolicy

ENV_PREFIX = "FARM_LIMIT_"


@dataclass(frozen=True)
class LimitPolicy:
    """Factors and floors. Times in seconds, sizes in bytes."""

    memory_factor: float = 4.0
    host_memory_floor: int = 2 * GiB  # address space of a worker with torch + Triton loaded
    gpu_memory_floor: int = 2 * GiB  # device memory beyond the workload (context, JIT, allocator)
    time_factor: float = 20.0
    call_floor_s: float = 5.0
    compile_s: float = 20.0  # extra for a workload's first call (JIT, autotuning)
    load_s: float = 300.0  # import, including load_inline's C++/CUDA build
    output_slack: int = 1 * MiB

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> LimitPolicy:
        """Defaults overridden by FARM_LIMIT_<FIELD> (e.g. FARM_LIMIT_TIME_FACTOR=40). Raises
        ValueError naming the variable when a value is not a positive number."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is None or not raw.strip():
                continue
            kind = int if f.type in (int, "int") else float
            try:
                value = kind(float(raw)) if kind is int else float(raw)
            except ValueError:
                value = -1
            if value <= 0:
                raise ValueError(f"{ENV_PREFIX}{f.name.upper()}={raw!r}: must be a positive number")
            values[f.name] = value
        return replace(cls(), **values)

    def call_seconds(self, reference_s: float, *, first: bool) -> float:
        """Time allowed for one correctness request, from the reference's time on the same
        inputs (input generation included)."""
        allowed = self.call_floor_s + self.time_factor * reference_s
        return allowed + (self.compile_s if first else 0.0)

    def timing_seconds(self, policy: TimingPolicy, call_s: float) -> float:
        """Time allowed for one timing request: the policy's warm-up and budget, plus the calls
        it must make at least, each as long as `call_s` (a trusted measurement of one call)."""
        budget = (policy.warmup_ms + policy.budget_ms) / 1000
        return 1.1 * budget + self.call_floor_s + 2 * (policy.min_calls + 3) * call_s

    def memory_bytes(self, workload_bytes: int) -> int:
        return self.host_memory_floor + int(self.memory_factor * workload_bytes)

    def gpu_memory_bytes(self, workload_bytes: int) -> int:
        return self.gpu_memory_floor + int(self.memory_factor * workload_bytes)

    def sandbox_limits(self, base: Limits, *, workload_bytes: int, gpu: bool) -> Limits:
        """The sandbox's limits for an evaluation whose largest workload needs `workload_bytes`
        (inputs + outputs). On GPU devices the limit is on resident memory (watched from
        outside, farm.sandbox.watch), and a GPU runtime's own footprint doubles the floor."""
        host = self.memory_bytes(workload_bytes) + (self.host_memory_floor if gpu else 0)
        return replace(
            base,
            memory_bytes=min(base.memory_bytes, host),
            tmp_bytes=min(base.tmp_bytes, max(256 * MiB, host // 4)),
        )

    def frame_bytes(self, output_bytes: int, calls: int) -> int:
        """The most tensor bytes one reply may carry: `calls` calls' outputs."""
        return calls * output_bytes + self.output_slack
