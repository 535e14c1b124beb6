from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet

from leaderboard.boards.models import Board
from leaderboard.compiled import CompiledValues
from leaderboard.runs.models import Run
from leaderboard.submissions.models import Submission


def _visible_to(user) -> Q:
    """Staff see all; a user sees their own and everyone's non-private submissions."""
    if user.is_staff:
        return Q()
    if user.is_authenticated:
        return Q(user=user) | Q(private=False)
    return Q(private=False)


def _may_see(user, *, owner_id: int, private: bool) -> bool:
    """_visible_to for one submission's columns."""
    return not private or user.is_staff or (user.is_authenticated and user.pk == owner_id)


def submissions_visible(*, user) -> QuerySet[Submission]:
    """Staff see all; a user sees their own and everyone's non-private submissions."""
    qs = Submission.objects.select_related("problem", "suite", "user", "source").defer(
        "problem__sol_table", "problem__workloads", "problem__description", "source__pending_text"
    )
    return qs.filter(_visible_to(user))


def submission_status(
    *, user, submission_id: int, fields: Sequence[str], run_fields: Sequence[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The submission's `fields` and its runs' `run_fields` (ORM paths such as
    "user__username") as plain dicts, runs sorted by hardware class and audit runs left out as
    in submission_runs. None when the submission does not exist or `user` may not see it.

    The status read is the API's most frequent request, so this runs the SQL of
    _status_queries (two queries, no model instances) and applies the ORM's column converters
    itself (tests/leaderboard/submissions/test_submission_status.py compares the API's JSON with the
    serializer's on PostgreSQL, test_embedded_database.py on SQLite)."""
    submission, runs = _status_queries(tuple(fields), tuple(run_fields))
    with connection.cursor() as cur:
        cur.execute(submission.sql, [submission_id])
        found = cur.fetchone()
        if found is None:
            return None
        row = submission.as_dict(found)
        if not _may_see(user, owner_id=row["user_id"], private=row["private"]):
            return None
        cur.execute(runs.sql, [submission_id])
        rows = [runs.as_dict(r) for r in cur.fetchall()]
    return row, sorted(rows, key=itemgetter("hardware_id"))


@functools.cache
def _status_queries(
    fields: tuple[str, ...], run_fields: tuple[str, ...]
) -> tuple[CompiledValues, CompiledValues]:
    """The status read's two queries, each taking the submission id as its one parameter,
    compiled by the ORM once per process and field list: compiling costs several times the CPU
    PostgreSQL spends answering these indexed lookups."""
    sub_cols = tuple(dict.fromkeys(("user_id", "private", *fields)))
    run_cols = tuple(dict.fromkeys(("hardware_id", *run_fields)))
    submission = Submission.objects.filter(pk=0).values(*sub_cols)
    runs = Run.objects.filter(submission_id=0, audit_of__isnull=True).values(*run_cols)
    return CompiledValues.of(submission, sub_cols), CompiledValues.of(runs, run_cols)


def submissions_own(*, user) -> QuerySet[Submission]:
    qs = Submission.objects.select_related("problem", "suite", "user").order_by("-id")
    return qs if user.is_staff else qs.filter(user=user)


def source_visible(*, submission: Submission, user) -> bool:
    """Owner and staff always; others when the submission is public and one of its boards
    has been made public by the board's owner."""
    return source_visible_for(
        user=user,
        owner_id=submission.user_id,
        private=submission.private,
        problem_id=submission.problem_id,
        hardware=submission.runs.values_list("hardware_id", flat=True),
    )


def source_visible_for(
    *, user, owner_id: int, private: bool, problem_id: int, hardware: Iterable[str]
) -> bool:
    """source_visible for a submission given by its columns; `hardware` (its runs' classes)
    is read only when the answer depends on the boards."""
    if user.is_authenticated and (user.is_staff or user.pk == owner_id):
        return True
    if private:
        return False
    return Board.objects.filter(
        problem_id=problem_id, hardware_id__in=hardware, sources_public=True
    ).exists()


def submission_runs(*, submission: Submission) -> QuerySet[Run]:
    """The submission's runs, one per hardware class (its audit runs are not among them), with
    their nodes, results and workload rows."""
    return (
        submission.runs.filter(audit_of__isnull=True)
        .select_related("node", "result")
        .prefetch_related("result__workloads")
        .order_by("hardware_id")
    )


def submission_state(*, runs: list[Run]) -> str:
    """queued | running | done | failed for the submission as a whole."""
    return submission_state_of(states={r.state for r in runs})


def submission_state_of(*, states: set[str]) -> str:
    """submission_state from the set of its runs' states."""
    if states & {Run.State.CLAIMED, Run.State.RUNNING}:
        return "running"
    if states & {Run.State.QUEUED, Run.State.LOST}:
        return "queued"
    return "failed" if Run.State.FAILED in states else "done"
