"""Limits sized to the workload: how much memory, time and output an evaluation may use.

A flat limit is either too tight for the largest problem or far too loose for the smallest (a
12 GiB allocation or a 10-minute hang in a 64x256 softmax). Every limit here is a floor plus a
stated factor times what the workload itself needs:
- memory: factor x (inputs + outputs + the reference's own peak), plus the floor an interpreter
  with torch needs (host memory for CPU devices; device memory, watched from outside, on GPUs),
  plus what the harness itself keeps in the worker (a timing window's captured outputs);
- time: the trusted side times the reference on each workload's inputs itself; a candidate call
  may take factor x that plus a floor, the first call of a workload also a compile allowance
  (Triton JIT, torch.compile); a timing window four times what the supervisor expects of it;
- output: what the workload's outputs can hold, for the calls the supervisor asks to see.

Operators override the factors and floors per node through the environment (`LimitPolicy.from_env`
names each variable; .env.example documents them).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from farm.config import Env
from farm.sandbox.limits import GiB, Limits, MiB

if TYPE_CHECKING:  # sizing a worker's limits needs no torch (farm.harness.prestart)
    from farm.harness.timing import TimingPolicy

ENV_PREFIX = "FARM_LIMIT_"

# A timed call's inputs are moved to a place drawn for that call (farm.harness.timing.Placement)
# when they hold at most PLACE_MAX_BYTES; the arena they are moved into holds them plus a slack
# of their own size, at least PLACE_SLACK_MIN and at most PLACE_SLACK_MAX.
PLACE_MAX_BYTES = 1 * GiB
PLACE_SLACK_MIN = 512 * MiB
PLACE_SLACK_MAX = 1 * GiB


def placement_bytes(input_bytes: int) -> int:
    """The arena a timer moves `input_bytes` of one call's inputs into (0: they stay put)."""
    if input_bytes <= 0 or input_bytes > PLACE_MAX_BYTES:
        return 0
    return input_bytes + min(PLACE_SLACK_MAX, max(PLACE_SLACK_MIN, input_bytes))


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
    keep_factor: float = 2.0  # a timing window's kept outputs, x the workload's bytes
    keep_floor: int = 512 * MiB  # ... plus this

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> LimitPolicy:
        """Defaults overridden by FARM_LIMIT_<FIELD> (e.g. FARM_LIMIT_TIME_FACTOR=40). Raises
        ValueError naming the variable when a value is not a positive number."""
        env = Env(environ=environ)
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.raw(ENV_PREFIX + f.name.upper())
            if raw is None:
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

    def warmup_seconds(self, policy: TimingPolicy, call_s: float) -> float:
        """Time allowed for a timing's warm-up request: its `warmup_ms`, plus a few calls each as
        long as `call_s` (a trusted measurement of one call)."""
        return 1.1 * policy.warmup_ms / 1000 + self.call_floor_s + 8 * call_s

    def window_seconds(self, expected_ms: float, call_s: float) -> float:
        """Time allowed for one timing window the supervisor expects to last `expected_ms`
        (its calls at the longest wall per call seen so far): the windows are sized to end
        within the timing budget, so a window that overruns its expectation this far is a hang."""
        return self.call_floor_s + 4 * expected_ms / 1000 + 2 * call_s

    def kept_bytes(self, workload_bytes: int) -> int:
        """Memory for one timing window's kept outputs (the calls' captures the worker holds
        until the supervisor names the re-checked ones). They are the harness's, not the
        submission's: every memory limit adds them to the submission's allowance."""
        return int(self.keep_factor * workload_bytes) + self.keep_floor

    def keep_calls(self, output_bytes: int, workload_bytes: int) -> int:
        """The most calls of one timing window whose outputs (`output_bytes` each) the worker
        may keep: as many as `kept_bytes` holds."""
        return max(1, self.kept_bytes(workload_bytes) // max(output_bytes, 1))

    def memory_bytes(self, workload_bytes: int) -> int:
        """Host memory of a worker whose workload needs `workload_bytes`."""
        allowance = self.host_memory_floor + int(self.memory_factor * workload_bytes)
        return allowance + self.kept_bytes(workload_bytes)

    def gpu_memory_bytes(self, workload_bytes: int, peak: int = 0) -> int:
        """Device memory of a worker whose workload needs `workload_bytes` (inputs + outputs)
        and whose reference peaked at `peak` bytes on the device (the trusted side measured),
        plus the harness's own: kept outputs and the arena timed calls' inputs are placed in
        (sized for inputs as large as the whole workload, or the largest that are placed)."""
        allowance = self.gpu_memory_floor + int(self.memory_factor * max(workload_bytes, peak))
        arena = placement_bytes(min(workload_bytes, PLACE_MAX_BYTES))
        return allowance + self.kept_bytes(workload_bytes) + arena

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
