from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet

from farm.result import WorkloadStatus
from leaderboard.nodes.selectors import hardware_unserved
from leaderboard.problems import farm_bridge
from leaderboard.runs.models import Result, Run


def queue_depth_by_hardware() -> dict[str, int]:
    """Queued runs per hardware class."""
    rows = Run.objects.filter(state=Run.State.QUEUED).values("hardware_id").annotate(n=Count("id"))
    return {row["hardware_id"]: row["n"] for row in rows}


def run_queue_position(*, run: Run) -> int:
    """1 + the queued runs of the run's hardware class that were queued before it (by id: the
    order the broker was handed them, requeued runs included)."""
    ahead = Run.objects.filter(state=Run.State.QUEUED, hardware_id=run.hardware_id, id__lt=run.pk)
    return ahead.count() + 1


def run_queue(run: Run) -> dict[str, Any] | None:
    """Where a queued run stands: {position, warning}, the warning set when no online node
    serves its class now (it waits; see FARM_UNSERVED_FAIL_AFTER_S). None once claimed."""
    if run.state != Run.State.QUEUED:
        return None
    warning = hardware_unserved(hardware=[run.hardware_id]).get(run.hardware_id)
    return {"position": run_queue_position(run=run), "warning": warning}


def runs_visible(*, user) -> QuerySet[Run]:
    """Staff see every run; a user sees their own."""
    qs = Run.objects.select_related("problem", "submission")
    return qs if user.is_staff else qs.filter(user=user)


def result_sizes(*, result: Result) -> str | None:
    """Which workloads a result ran, which of its problem's it did not, and why
    (farm.suite.model.Problem.size_statement); skipped and secret workloads are not counted."""
    ran = [
        w.workload_id
        for w in result.workloads.all()
        if w.status != WorkloadStatus.SKIPPED.value and not w.secret
    ]
    problem = result.run.problem
    return farm_bridge.size_statement(problem.suite_id, problem.name, ran)
