from __future__ import annotations

from django.db import models


class Node(models.Model):
    """A machine running an agent. Its token is stored only as a sha256."""

    name = models.CharField(max_length=100, unique=True)
    token_hash = models.CharField(max_length=64, unique=True)
    hardware = models.ManyToManyField("problems.HardwareClass", blank=True, related_name="nodes")
    allowed_hardware = models.ManyToManyField(
        "problems.HardwareClass",
        blank=True,
        related_name="+",
        help_text="classes the operator allows; registering can only narrow them",
    )
    enabled = models.BooleanField(default=True, help_text="a disabled node can claim nothing")
    draining = models.BooleanField(
        default=False, help_text="finish current runs, claim no new ones"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    registered_at = models.DateTimeField(null=True, blank=True)
    last_heartbeat = models.DateTimeField(null=True, blank=True, db_index=True)
    agent_version = models.CharField(max_length=50, blank=True)
    hostname = models.CharField(max_length=200, blank=True)
    devices = models.JSONField(default=list, blank=True)
    current_runs = models.JSONField(default=list, blank=True)
    healthy = models.BooleanField(
        default=True, help_text="the agent's own self-test passed; an unhealthy node claims nothing"
    )
    health = models.JSONField(
        default=dict,
        blank=True,
        help_text="the agent's last health report: {healthy, problems: [{code, detail}], ...}",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Reception(models.Model):
    """The web tier's own liveness, one row: it has answered requests without a gap longer than
    FARM_RECEPTION_GAP_S since `since`, the latest at `last`. The reaper presumes a node dead
    only when the server was receiving all along (leaderboard.nodes.reception)."""

    since = models.DateTimeField()
    last = models.DateTimeField()

    def __str__(self) -> str:
        return f"receiving since {self.since:%Y-%m-%d %H:%M:%S}"
