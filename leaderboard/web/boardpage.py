"""What a board page shows, built from the ranking and the problem: one set of workloads for every
table and chart of the page, per-workload columns, the eager baseline and the SOL rows.

The workloads are those the entries were scored on (their public workloads); with no entry yet,
every workload of the problem that has a SOL bound on the class (leaderboard mode runs each at
its real size, docs/npu-sim.md "Real sizes"). So the board's SOL column (a geometric mean over
the entries' workloads), the per-workload columns, the SOL table and the roofline's points all
speak of the same sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leaderboard.boards.selectors import RankedEntry, board_deterministic
from leaderboard.problems.models import Problem


@dataclass(frozen=True)
class WorkloadColumn:
    id: str
    shape: str  # "N=4096 float32"
    sol_ms: float | None


@dataclass(frozen=True)
class Cell:
    time_ms: float | None
    fraction_of_sol: float | None  # T_SOL / T
    sol_score: float | None

    @property
    def time_text(self) -> str:
        """Three significant digits, in ms ("–" when not timed)."""
        return "–" if self.time_ms is None else f"{self.time_ms:.3g}"

    @property
    def fraction_text(self) -> str:
        return "" if self.fraction_of_sol is None else f"{_percent(self.fraction_of_sol)} of SOL"


def _percent(fraction: float | None) -> str:
    """0.0123 -> "1.23 %": three significant digits, so 0.1 % and 90 % read alike."""
    return "–" if fraction is None else f"{fraction * 100:.3g} %"


def board_page(*, problem: Problem, hardware: str, ranked: list[RankedEntry]) -> dict[str, Any]:
    """The board page's context beyond the ranking (see the module notes)."""
    sol_rows = {r["workload"]: r for r in problem.sol_table.get(hardware, [])}
    columns = _columns(problem, sol_rows, ranked)
    return {
        "columns": columns,
        "rows": [(r, _cells(r, columns), _percent(r.entry.fraction_of_sol)) for r in ranked],
        "eager": _eager_cells(ranked, columns),
        "sol_rows": [{**sol_rows[c.id], "shape": c.shape} for c in columns if c.id in sol_rows],
        "deterministic": board_deterministic(hardware),
        "launch_floor_us": _launch_floor_us(sol_rows.values()),
    }


def _columns(
    problem: Problem, sol_rows: dict[str, dict[str, Any]], ranked: list[RankedEntry]
) -> list[WorkloadColumn]:
    scored = {w for r in ranked for w in (r.entry.workloads or r.entry.intervals)}
    wanted = scored or set(sol_rows)
    return [
        WorkloadColumn(w["id"], _shape(w), (sol_rows.get(w["id"]) or {}).get("time_ms"))
        for w in problem.workloads
        if w["id"] in wanted
    ]


def _shape(workload: dict[str, Any]) -> str:
    axes = " ".join(f"{k}={v}" for k, v in workload["axes"].items())
    return f"{axes} {workload['dtype']}"


def _cells(ranked: RankedEntry, columns: list[WorkloadColumn]) -> list[Cell]:
    figures = ranked.entry.workloads
    return [_cell(figures.get(c.id) or {}, c) for c in columns]


def _cell(figures: dict[str, Any], column: WorkloadColumn) -> Cell:
    t = figures.get("time_ms")
    sol = figures.get("sol_ms") or column.sol_ms
    return Cell(t, sol / t if sol and t else None, figures.get("sol_score"))


def _eager_cells(ranked: list[RankedEntry], columns: list[WorkloadColumn]) -> list[Cell] | None:
    """The eager baseline's time per workload, as the first entry's run measured it (on a
    deterministic device every run gets the same); None with no entry."""
    if not ranked:
        return None
    figures = ranked[0].entry.workloads
    return [_cell({"time_ms": (figures.get(c.id) or {}).get("eager_ms")}, c) for c in columns]


def _launch_floor_us(rows: Any) -> float | None:
    """The launch floor the class's SOL bound includes (µs), None where it has none."""
    floors = {r.get("overhead_ms") or 0.0 for r in rows}
    top = max(floors, default=0.0)
    return top * 1e3 if top else None
