"""The npu-sim cost model: counted work per program instance -> simulated seconds.

Pure functions of counts and a frozen `CostParams`; no clocks, no addresses, no dict order in
sums (work is kept in sorted tuples), so the same counts give bit-identical times anywhere.
See docs/npu-sim.md for the formulas and why they were chosen.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from farm.hardware.npu_sim.spec import NPU_SIM_V1, NpuSimSpec

# Cost-model constants (part of model version 1; changing one changes every simulated time).
MODEL_VERSION = "npu-sim-v1/cost-1"
# Two simulated times closer than this fraction are within the model's resolution: the model
# leaves out caches between programs, bank conflicts and DMA granularity (docs/npu-sim.md).
RESOLUTION = 0.10
# Launches of more programs than this are scheduled by the list-scheduling bound, not one by one.
EXACT_SCHEDULE_PROGRAMS = 65536
# One core's path to HBM can take at most this many times its fair share (chip / cores).
CORE_LINK_FACTOR = 4.0
# float64 has no vector or matrix unit: it is emulated at 1/8 of the float32 vector rate.
FP64_EMULATION_DIVISOR = 8
# A PyTorch op is mapped to one launch of tile programs of about this many bytes or FLOPs.
TORCH_TILE_BYTES = 64 * 2**10
TORCH_TILE_FLOPS = 2 * 128**3

# Work is a sorted tuple of (unit, dtype, FLOPs); unit is "tensor" or "vector".
Work = tuple[tuple[str, str, int], ...]

# dtypes without an entry of their own cost like the named one, divided by the factor.
_VECTOR_FALLBACK = {
    "float64": ("float32", FP64_EMULATION_DIVISOR),
    "bool": ("int8", 1),
    "uint8": ("int8", 1),
    "int16": ("float16", 1),
    "uint16": ("float16", 1),
    "uint32": ("int32", 1),
    "uint64": ("int64", 1),
    "float8_e4m3fn": ("float16", 1),
    "float8_e5m2": ("float16", 1),
}
_MATRIX_FALLBACK = {"float8_e4m3fn": "float16", "float8_e5m2": "float16", "uint8": "int8"}


@dataclass(frozen=True)
class ProgramRecord:
    """What one program instance did: HBM bytes (after on-chip reuse) and FLOPs by unit."""

    read_bytes: int
    write_bytes: int
    work: Work


Runs = tuple[tuple[ProgramRecord, int], ...]  # (record, how many in a row), in grid order


@dataclass(frozen=True)
class LaunchRecord:
    """One kernel launch: a Triton grid, or one PyTorch op mapped onto the chip. The programs
    are listed one by one, or (sampled launches of up to millions of programs) as `runs`."""

    name: str
    kind: str  # "triton" | "torch"
    grid: tuple[int, int, int]
    programs: tuple[ProgramRecord, ...]
    runs: Runs = ()

    def program_runs(self) -> Runs:
        """The programs as runs of equal records, in grid order."""
        return self.runs or runs_of(self.programs)


def runs_of(programs: Sequence[ProgramRecord]) -> Runs:
    out: list[tuple[ProgramRecord, int]] = []
    for prog in programs:
        if out and (out[-1][0] is prog or out[-1][0] == prog):
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((prog, 1))
    return tuple(out)


@dataclass(frozen=True)
class CostParams:
    """The figures the model uses, copied from the pinned spec at install time."""

    cores: int
    clock_hz: float
    chip_bw: float  # bytes/s
    core_link_bw: float  # bytes/s, most one core can draw
    core_buffer_bytes: int
    launch_s: float
    program_s: float
    matrix_rate: tuple[tuple[str, int], ...]  # FLOP/cycle per core, by dtype
    vector_rate: tuple[tuple[str, int], ...]

    @classmethod
    def from_spec(cls, spec: NpuSimSpec = NPU_SIM_V1) -> CostParams:
        return cls(
            cores=spec.cores,
            clock_hz=spec.clock_hz,
            chip_bw=spec.hbm_bandwidth,
            core_link_bw=CORE_LINK_FACTOR * spec.hbm_bandwidth / spec.cores,
            core_buffer_bytes=spec.core_buffer_bytes,
            launch_s=spec.launch_overhead_s,
            program_s=spec.program_overhead_s,
            matrix_rate=tuple(sorted(spec.matrix_flop_per_cycle.items())),
            vector_rate=tuple(sorted(spec.vector_flop_per_cycle.items())),
        )


@functools.lru_cache(maxsize=256)
def core_flops_per_s(unit: str, dtype: str, p: CostParams) -> float:
    """FLOP/s of one core for `unit` ("tensor" | "vector") on `dtype`.

    A dtype the matrix unit lacks runs on the vector unit; one the vector unit lacks is
    emulated (see _VECTOR_FALLBACK).
    """
    if unit == "tensor":
        rate = dict(p.matrix_rate).get(_MATRIX_FALLBACK.get(dtype, dtype), 0)
        if rate > 0:
            return rate * p.clock_hz
    vector = dict(p.vector_rate)
    rate, divisor = vector.get(dtype, 0), 1
    if rate <= 0:
        base, divisor = _VECTOR_FALLBACK.get(dtype, ("float32", 1))
        rate = vector.get(base, 0) or vector["float32"]
    return rate * p.clock_hz / divisor


def compute_s(work: Work, p: CostParams) -> float:
    """Seconds one core spends on `work` (matrix and vector units do not overlap)."""
    return sum(flops / core_flops_per_s(unit, dtype, p) for unit, dtype, flops in work)


def program_s(prog: ProgramRecord, core_bw: float, p: CostParams) -> float:
    """Seconds of one program instance on a core that draws `core_bw` bytes/s from HBM."""
    memory = (prog.read_bytes + prog.write_bytes) / core_bw
    return max(memory, compute_s(prog.work, p)) + p.program_s


def launch_s(programs: Sequence[ProgramRecord], p: CostParams) -> float:
    """Seconds of one launch: overhead + the busiest core after greedy in-order dispatch.

    Each program goes, in grid order, to the core that frees up first (lowest index on ties),
    as a hardware block scheduler does. The HBM share of a core is the chip bandwidth split
    over the cores the launch keeps busy, capped by one core's link.
    """
    if not programs:
        return p.launch_s
    active = min(len(programs), p.cores)
    core_bw = min(p.chip_bw / active, p.core_link_bw)
    cores = [(0.0, c) for c in range(active)]
    seconds: dict[int, float] = {}  # by record identity: sampled launches share records
    for prog in programs:
        t = seconds.get(id(prog))
        if t is None:
            t = seconds[id(prog)] = program_s(prog, core_bw, p)
        free_at, core = cores[0]
        heapq.heapreplace(cores, (free_at + t, core))
    return p.launch_s + max(t for t, _ in cores)


def launch_s_runs(runs: Runs, p: CostParams) -> float:
    """launch_s over runs of equal programs: the same greedy dispatch, with a run of equal
    programs handed out round-robin in whole rounds when that is what the greedy rule does
    (the least-loaded core, once given one, is at least as loaded as the most-loaded one).
    Each core's time is still the sum of its programs, added one by one."""
    total = sum(n for _, n in runs)
    if not total:
        return p.launch_s
    active = min(total, p.cores)
    core_bw = min(p.chip_bw / active, p.core_link_bw)
    if total > EXACT_SCHEDULE_PROGRAMS:
        return p.launch_s + _list_schedule_bound(runs, core_bw, active, p)
    cores = [(0.0, c) for c in range(active)]
    for prog, n in runs:
        t = program_s(prog, core_bw, p)
        while n:
            order = sorted(cores)
            if n >= active and order[0][0] + t >= order[-1][0]:
                cores = _rounds(order, t, n)
                break
            free_at, core = cores[0]
            heapq.heapreplace(cores, (free_at + t, core))
            n -= 1
    return p.launch_s + max(t for t, _ in cores)


def _list_schedule_bound(runs: Runs, core_bw: float, active: int, p: CostParams) -> float:
    """The busiest core of a greedy schedule of a launch too large to dispatch one by one:
    Graham's bound for list scheduling, total / cores + (1 - 1/cores) x the longest program
    (never below the greedy result, above it by less than one program's time)."""
    cache: dict[int, float] = {}
    seconds = [
        (cache.get(id(prog)) or cache.setdefault(id(prog), program_s(prog, core_bw, p)), n)
        for prog, n in runs
    ]
    total = math.fsum(t * n for t, n in seconds)
    longest = max(t for t, _ in seconds)
    return total / active + longest * (active - 1) / active


def _rounds(order: list[tuple[float, int]], t: float, n: int) -> list[tuple[float, int]]:
    """Hand `n` programs of `t` seconds to the cores in `order`, round-robin (a heap)."""
    q, rem = divmod(n, len(order))
    out = []
    for i, (free_at, core) in enumerate(order):
        for _ in range(q + (i < rem)):
            free_at += t
        out.append((free_at, core))
    heapq.heapify(out)
    return out


def merge_work(items: Iterable[tuple[str, str, int]]) -> Work:
    """Sum FLOPs per (unit, dtype) and return them in sorted order."""
    totals: dict[tuple[str, str], int] = {}
    for unit, dtype, flops in items:
        totals[(unit, dtype)] = totals.get((unit, dtype), 0) + int(flops)
    return tuple((u, d, f) for (u, d), f in sorted(totals.items()) if f > 0)


def split_op(name: str, read: int, write: int, work: Work, p: CostParams) -> LaunchRecord:
    """Map one PyTorch op (its total bytes and FLOPs) onto the chip as one launch.

    The op becomes P equal tile programs, P = the number of TORCH_TILE_BYTES / _FLOPS tiles,
    at most one per core (a library kernel with a good schedule).
    """
    tensor_flops = sum(f for unit, _, f in work if unit == "tensor")
    tiles = max(
        math.ceil((read + write) / TORCH_TILE_BYTES), math.ceil(tensor_flops / TORCH_TILE_FLOPS)
    )
    n = max(1, min(p.cores, tiles))
    share = ProgramRecord(
        read_bytes=-(-read // n),
        write_bytes=-(-write // n),
        work=tuple((u, d, -(-f // n)) for u, d, f in work),
    )
    return LaunchRecord(name=name, kind="torch", grid=(n, 1, 1), programs=(share,) * n)


def sol_floor_s(work: Work, hbm_bytes: int, p: CostParams) -> float:
    """Speed-of-light seconds of `work` and `hbm_bytes` on the whole chip (no overheads)."""
    compute = sum(f / (core_flops_per_s(u, d, p) * p.cores) for u, d, f in work)
    return max(compute, hbm_bytes / p.chip_bw)
