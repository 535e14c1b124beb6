from __future__ import annotations

from django.db import models


class Artifact(models.Model):
    """A file a node uploaded for a run (logs, profile) through the server's signed upload
    endpoint. The upload is accepted only while its attempt is open; its bytes wait in
    `pending_data` while artifact storage is unavailable."""

    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="artifacts")
    attempt = models.PositiveIntegerField()
    name = models.CharField(max_length=64)
    key = models.CharField(max_length=300)
    content_type = models.CharField(max_length=100, default="application/octet-stream")
    object_key = models.CharField(
        max_length=320,
        blank=True,
        help_text="where the accepted upload is stored (each upload gets its own key; blank: "
        "`key`, as uploads made before this field were stored)",
    )
    pending_data = models.BinaryField(
        null=True, blank=True, help_text="the upload, while artifact storage could not take it"
    )
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

    @property
    def stored_key(self) -> str:
        """The storage key of the accepted upload."""
        return self.object_key or self.key
