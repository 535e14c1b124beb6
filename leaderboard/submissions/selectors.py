from __future__ import annotations

from django.db.models import Q, QuerySet

from leaderboard.boards.models import Board
from leaderboard.runs.models import Run
from leaderboard.submissions.models import Submission


def submissions_visible(*, user) -> QuerySet[Submission]:  # type: ignore[no-untyped-def]
    """Staff see all; a user sees their own and everyone's non-private submissions."""
    qs = Submission.objects.select_related("problem", "suite", "user", "source").defer(
        "problem__sol_table", "problem__workloads", "problem__description", "source__pending_text"
    )
    if user.is_staff:
        return qs
    if user.is_authenticated:
        return qs.filter(Q(user=user) | Q(private=False))
    return qs.filter(private=False)


def submissions_own(*, user) -> QuerySet[Submission]:  # type: ignore[no-untyped-def]
    qs = Submission.objects.select_related("problem", "suite", "user").order_by("-id")
    return qs if user.is_staff else qs.filter(user=user)


def source_visible(*, submission: Submission, user) -> bool:  # type: ignore[no-untyped-def]
    """Owner and staff always; others when the submission is public and one of its boards
    has been made public by the board's owner."""
    if user.is_authenticated and (user.is_staff or user.pk == submission.user_id):
        return True
    if submission.private:
        return False
    hardware = submission.runs.values_list("hardware_id", flat=True)
    return Board.objects.filter(
        problem_id=submission.problem_id, hardware_id__in=hardware, sources_public=True
    ).exists()


def submission_runs(*, submission: Submission) -> QuerySet[Run]:
    """The submission's runs, one per hardware class (its audit runs are not among them)."""
    return (
        submission.runs.filter(audit_of__isnull=True)
        .select_related("hardware", "result")
        .order_by("hardware_id")
    )


def submission_state(*, runs: list[Run]) -> str:
    """queued | running | done | failed for the submission as a whole."""
    states = {r.state for r in runs}
    if states & {Run.State.CLAIMED, Run.State.RUNNING}:
        return "running"
    if states & {Run.State.QUEUED, Run.State.LOST}:
        return "queued"
    return "failed" if Run.State.FAILED in states else "done"


def runs_visible(*, user) -> QuerySet[Run]:  # type: ignore[no-untyped-def]
    qs = Run.objects.select_related("problem", "submission")
    return qs if user.is_staff else qs.filter(user=user)
