"""What a measured call reports: simulated time and the counts it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from farm.hardware.npu_sim.costmodel import (
    MODEL_VERSION,
    CostParams,
    LaunchRecord,
    ProgramRecord,
    Work,
    launch_s_runs,
    merge_work,
    sol_floor_s,
)


@dataclass(frozen=True)
class LaunchReport:
    """One launch: a Triton grid or one PyTorch op (kind "torch")."""

    name: str
    kind: str  # "triton" | "torch"
    grid: tuple[int, int, int]
    programs: int
    read_bytes: int  # HBM bytes loaded (after on-chip reuse)
    write_bytes: int  # HBM bytes stored
    flops: dict[str, int]  # {"tensor": matrix-unit FLOPs, "vector": vector-unit FLOPs}
    time_ms: float  # simulated, overheads included
    bound: str = ""  # "memory" | "compute" | "overhead" (see bound_of)


@dataclass(frozen=True)
class SimReport:
    """The simulated cost of one call on npu-sim-v1.

    `time_ms` is the sum of the launches' simulated times; `sol_ms` the speed-of-light time of
    the counted FLOPs and bytes on the whole chip (time_ms >= sol_ms always); `output` is what
    the call returned (not part of equality or of `to_dict()`).
    """

    time_ms: float
    sol_ms: float
    launches: int
    programs: int
    flops: dict[str, int]
    hbm_bytes: dict[str, int]  # {"read": bytes, "written": bytes}
    per_launch: tuple[LaunchReport, ...]
    notes: tuple[str, ...] = ()
    model: str = MODEL_VERSION
    output: Any = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the output left out)."""
        return {
            "model": self.model,
            "time_ms": self.time_ms,
            "sol_ms": self.sol_ms,
            "launches": self.launches,
            "programs": self.programs,
            "flops": dict(self.flops),
            "hbm_bytes": dict(self.hbm_bytes),
            "notes": list(self.notes),
            "per_launch": [
                {**vars(lr), "grid": list(lr.grid), "flops": dict(lr.flops)}
                for lr in self.per_launch
            ],
        }


def _by_unit(work: Work) -> dict[str, int]:
    out = {"tensor": 0, "vector": 0}
    for unit, _, flops in work:
        out[unit] += flops
    return out


def _distinct(record: LaunchRecord) -> list[tuple[ProgramRecord, int]]:
    """Each distinct record with how many programs left it."""
    counts: dict[int, list] = {}
    for prog, n in record.program_runs():
        slot = counts.get(id(prog))
        if slot is None:
            counts[id(prog)] = [prog, n]
        else:
            slot[1] += n
    return [(prog, n) for prog, n in counts.values()]


def launch_report(record: LaunchRecord, p: CostParams) -> tuple[LaunchReport, Work]:
    runs = record.program_runs()
    groups = _distinct(record)
    work = merge_work((u, d, f * n) for prog, n in groups for u, d, f in prog.work)
    time_s = launch_s_runs(runs, p)
    read = sum(prog.read_bytes * n for prog, n in groups)
    written = sum(prog.write_bytes * n for prog, n in groups)
    report = LaunchReport(
        name=record.name,
        kind=record.kind,
        grid=record.grid,
        programs=sum(n for _, n in runs),
        read_bytes=read,
        write_bytes=written,
        flops=_by_unit(work),
        time_ms=time_s * 1e3,
        bound=bound_of(read + written, work, time_s, p),
    )
    return report, work


def bound_of(nbytes: int, work: Work, time_s: float, p: CostParams) -> str:
    """What limits a launch: "memory" or "compute" when that floor is at least half its time,
    else "overhead" (launch and per-program costs, tails of the schedule)."""
    memory = nbytes / p.chip_bw
    compute = sol_floor_s(work, 0, p)
    limit = max(memory, compute)
    if limit < 0.5 * time_s:
        return "overhead"
    return "memory" if memory >= compute else "compute"


def build_report(
    records: list[LaunchRecord], p: CostParams, output: Any, notes: list[str]
) -> SimReport:
    """Cost every launch and sum them (launches run one after another, in call order)."""
    launches: list[LaunchReport] = []
    works: list[tuple[str, str, int]] = []
    for record in records:
        report, work = launch_report(record, p)
        launches.append(report)
        works.extend(work)
    total_work = merge_work(works)
    read = sum(lr.read_bytes for lr in launches)
    written = sum(lr.write_bytes for lr in launches)
    return SimReport(
        time_ms=sum(lr.time_ms for lr in launches),
        sol_ms=sol_floor_s(total_work, read + written, p) * 1e3,
        launches=len(launches),
        programs=sum(lr.programs for lr in launches),
        flops=_by_unit(total_work),
        hbm_bytes={"read": read, "written": written},
        per_launch=tuple(launches),
        notes=tuple(notes),
        output=output,
    )
