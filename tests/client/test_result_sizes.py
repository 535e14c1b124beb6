"""`farm submit --wait` and `farm status` print, under a run's table, which workload sizes ran
and which of the problem's did not (the server's `result.sizes`)."""

from __future__ import annotations

from farm.client.commands.tables import run_footer
from farm.client.types import Run

SIZES = "ran: small; not run: source (cpu and npu-sim run only the small workloads (small); ...)"


def _run(result: dict | None) -> Run:
    data = {"id": 7, "hardware": "npu-sim-v1", "mode": "test", "state": "done", "result": result}
    return Run.from_json({**data, "verdict": "PASSED"})


def test_the_footer_states_the_sizes_run_and_not_run():
    run = _run({"server_reasons": [], "sizes": SIZES})
    assert run.sizes == SIZES
    assert f"  sizes: {SIZES}" in run_footer(run)


def test_no_sizes_line_without_a_statement():
    run = _run({"server_reasons": [], "sizes": None})
    assert run.sizes is None and not any("sizes" in line for line in run_footer(run))
    assert _run(None).sizes is None
