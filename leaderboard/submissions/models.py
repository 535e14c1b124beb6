from __future__ import annotations

from django.conf import settings
from django.db import models


class Source(models.Model):
    """Kernel source, content-addressed by sha256 and stored once in artifact storage.

    `pending_text` holds the text until the artifact store has it, so that no submission is lost
    while S3 is unreachable; a Celery task retries the upload and clears it. Neither
    `pending_text` nor `stored_at` set means the object was found missing from storage: the next
    submission of the same text puts it back (source_get_or_create).
    """

    sha256 = models.CharField(max_length=64, primary_key=True)
    size = models.PositiveIntegerField(help_text="bytes (UTF-8)")
    pending_text = models.TextField(null=True, blank=True)
    stored_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    @property
    def key(self) -> str:
        return f"sources/{self.sha256[:2]}/{self.sha256}.py"

    def mark_missing(self) -> None:
        """Artifact storage lost the text: the next submission of the same text stores it again
        (unless that submission already put the text back in the database)."""
        Source.objects.filter(sha256=self.sha256, pending_text__isnull=True).update(stored_at=None)

    def __str__(self) -> str:
        return self.sha256[:12]


class Submission(models.Model):
    class Mode(models.TextChoices):
        TEST = "test"
        BENCHMARK = "benchmark"
        LEADERBOARD = "leaderboard"
        PROFILE = "profile"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions"
    )
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="submissions")
    filename = models.CharField(max_length=200, default="submission.py")
    label = models.CharField(max_length=200, blank=True)
    language = models.CharField(max_length=20)
    suite = models.ForeignKey("problems.Suite", on_delete=models.PROTECT)
    suite_hash = models.CharField(
        max_length=64, help_text="the pinned suite hash at submission time"
    )
    problem = models.ForeignKey("problems.Problem", on_delete=models.PROTECT)
    mode = models.CharField(max_length=20, choices=Mode.choices)
    private = models.BooleanField(
        default=True, help_text="private submissions never appear on a board"
    )
    hacked = models.BooleanField(default=False, help_text="games the evaluation: off every board")
    hacked_note = models.TextField(blank=True)
    hacked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        indexes = [models.Index(fields=["user", "-id"], name="submission_user_recent")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.problem} by {self.user}"
