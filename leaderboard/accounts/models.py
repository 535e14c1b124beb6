from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A user's API token. Only the sha256 of the key is stored; the key is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, default="default")
    key_hash = models.CharField(max_length=64, unique=True)
    key_hint = models.CharField(
        max_length=12, help_text="first characters of the key, to tell tokens apart"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.user} / {self.name} ({self.key_hint}...)"


class Quota(models.Model):
    """Runs per hour a user may queue on one hardware class. A row with no user is the default
    for everybody on that hardware; with no row at all FARM_QUOTA_RUNS_PER_HOUR applies."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="quotas",
    )
    hardware = models.ForeignKey("problems.HardwareClass", on_delete=models.CASCADE)
    runs_per_hour = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "hardware"], name="quota_user_hardware"),
            models.UniqueConstraint(
                fields=["hardware"],
                condition=models.Q(user__isnull=True),
                name="quota_default_hardware",
            ),
        ]

    def __str__(self) -> str:
        who = self.user or "everyone"
        return f"{who} on {self.hardware_id}: {self.runs_per_hour}/h"
