from __future__ import annotations

import hashlib
from collections import Counter

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from leaderboard import metrics
from leaderboard.boards.services import board_entries_refresh_for_runs
from leaderboard.runs.services import runs_create
from leaderboard.submissions.models import Source, Submission
from leaderboard.submissions.sources import source_store_soon
from leaderboard.submissions.throttles import quota_exceeded
from leaderboard.submissions.validation import SubmissionRequest


class QuotaExceeded(Exception):
    """Queuing these runs would pass the user's hourly quota of a hardware class."""

    def __init__(self, wait_s: float, message: str) -> None:
        super().__init__(message)
        self.wait_s = wait_s


def source_get_or_create(*, text: str) -> Source:
    """The Source for `text` (deduplicated by sha256); new text waits in the DB until stored."""
    data = text.encode("utf-8")
    sha = hashlib.sha256(data).hexdigest()
    source, created = Source.objects.get_or_create(
        sha256=sha, defaults={"size": len(data), "pending_text": text}
    )
    if not created and source.pending_text is None and source.stored_at is None:
        # found missing from storage (a claim marked it): the same text restores the object
        Source.objects.filter(sha256=sha, pending_text__isnull=True).update(pending_text=text)
        source.pending_text = text
    return source


def submissions_create(*, user, requests: list[SubmissionRequest]) -> list[Submission]:
    """Create submissions and their runs in one transaction (all or nothing). After the
    commit, runs go to their hardware queues and new sources to artifact storage.

    The quota is checked here, under a lock on the user's row: one user's submissions are
    serialized, so two simultaneous requests cannot both pass a check made before either
    inserted its runs (the API's throttle is an early answer, this is the rule)."""
    created = []
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).exists()
        wanted = Counter(str(hw.pk) for req in requests for hw in dict.fromkeys(req.hardware))
        exceeded = quota_exceeded(user=user, wanted=wanted)
        if exceeded is not None:
            raise QuotaExceeded(*exceeded)
        for req in requests:
            source = source_get_or_create(text=req.source)
            submission = Submission.objects.create(
                user=user,
                source=source,
                filename=req.filename[:200],
                label=req.label[:200],
                language=req.language,
                suite=req.suite,
                suite_hash=req.suite.hash,
                problem=req.problem,
                mode=req.mode,
                private=req.private,
            )
            runs_create(submission=submission, hardware=list(req.hardware))
            created.append(submission)
        pending = sorted({s.source_id for s in created if s.source.pending_text is not None})
        transaction.on_commit(lambda: source_store_soon(sha256s=pending))
        transaction.on_commit(lambda: metrics.submissions_created(len(created)))
    return created


def submission_mark_hacked(*, submission: Submission, hacked: bool, note: str = "") -> Submission:
    """Take a submission off every board (or put it back); its runs and results are kept."""
    with transaction.atomic():
        submission.hacked = hacked
        submission.hacked_note = note
        submission.hacked_at = timezone.now() if hacked else None
        submission.save(update_fields=["hacked", "hacked_note", "hacked_at"])
        board_entries_refresh_for_runs(run_ids=list(submission.runs.values_list("id", flat=True)))
    return submission
