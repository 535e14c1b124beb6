from __future__ import annotations

from django.db import models


class Artifact(models.Model):
    """A file a node uploaded for a run (logs, result document, profile) by presigned URL."""

    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="artifacts")
    attempt = models.PositiveIntegerField()
    name = models.CharField(max_length=64)
    key = models.CharField(max_length=300)
    content_type = models.CharField(max_length=100, default="application/octet-stream")
    reported = models.BooleanField(
        default=False, help_text="the node's result named it as uploaded"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "attempt", "name"], name="artifact_run_attempt_name"
            )
        ]

    def __str__(self) -> str:
        return self.key
