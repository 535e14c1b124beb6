"""Rich tables of runs and results, shared by `farm submit --wait` and `farm status`."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from farm.client.commands.common import fmt_ms, fmt_score
from farm.client.types import Run
from farm.result import reasons_grouped

VERDICT_STYLE = {"PASSED": "green", "INCORRECT": "red", "REJECTED": "bold red"}


def runs_table(runs: Sequence[Run], title: str | None = None) -> Table:
    table = Table(title=title)
    for col in ("run", "submission", "problem", "hardware", "mode", "state", "verdict"):
        table.add_column(col, overflow="fold")  # a narrow terminal folds a name, never cuts it
    table.add_column("SOL score", justify="right", overflow="fold")
    for r in runs:
        verdict = r.verdict or "-"
        style = VERDICT_STYLE.get(verdict, "yellow" if r.verdict else "")
        table.add_row(
            str(r.id),
            str(r.submission or "-"),
            r.problem or "-",
            r.hardware,
            r.mode,
            r.state,
            f"[{style}]{verdict}[/]" if style else verdict,
            fmt_score(r.sol_score),
        )
    return table


def result_table(run: Run) -> Table:
    """Per-workload rows of a finished run."""
    verdict = run.verdict or run.state
    table = Table(title=f"run {run.id}: {run.problem} on {run.hardware} ({run.mode}) - {verdict}")
    for col in ("workload", "status"):
        table.add_column(col, overflow="fold")
    for col in ("time", "eager", "SOL", "SOL score", "x eager"):
        table.add_column(col, justify="right", overflow="fold")
    if run.result is None:
        return table
    for w in run.result.workloads:
        speedup = w.speedup.get("eager")
        table.add_row(
            w.id + (" (secret)" if w.secret else ""),
            w.status,
            fmt_ms(w.time_ms),
            fmt_ms(w.baseline_ms.get("eager")),
            fmt_ms(w.sol_ms),
            fmt_score(w.sol_score),
            "-" if speedup is None else f"{speedup:.2f}x",
        )
    return table


def run_footer(run: Run) -> list[str]:
    """Lines under a run's table: score, the sizes run and not run, reasons, failure."""
    lines = [f"verdict: {run.verdict or '-'}   SOL score: {fmt_score(run.sol_score)}"]
    if run.sizes:
        lines.append(f"  sizes: {run.sizes}")
    reasons = list(run.result.reasons) if run.result else []
    reasons += run.server_reasons
    triples = [(r.code, r.detail, r.workload) for r in reasons]
    lines += [_reason(*grouped) for grouped in reasons_grouped(triples)]
    if run.failure_code or run.failure_detail:
        lines.append(
            f"  farm failure {run.failure_code or ''}: {run.failure_detail or ''}".rstrip()
        )
    if run.audit:
        lines.append(f"  audit {run.audit}: {run.audit_detail}".rstrip())
    return lines


def _reason(code: str, detail: str, workloads: list[str]) -> str:
    """`CODE [w1, w2]: detail`, the detail whole: the console wraps it, nothing is cut."""
    where = f" [{', '.join(workloads)}]" if workloads else ""
    return f"  {code}{where}: {detail.rstrip()}"


def queue_lines(runs: Sequence[Run]) -> list[str]:
    """Where each queued run stands, and why it may wait long (no node serves its class)."""
    lines = []
    for r in runs:
        if r.state == "queued" and r.queue_position is not None:
            lines.append(f"run {r.id}: #{r.queue_position} in the {r.hardware} queue")
        if r.state == "queued" and r.queue_warning:
            lines.append(f"  warning: {r.queue_warning}")
    return lines
