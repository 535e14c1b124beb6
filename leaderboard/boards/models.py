from __future__ import annotations

from django.conf import settings
from django.db import models


class Board(models.Model):
    """A board: one problem of a suite on one hardware class. Its owner decides whether the
    sources of its entries are public."""

    problem = models.ForeignKey("problems.Problem", on_delete=models.CASCADE, related_name="boards")
    hardware = models.ForeignKey(
        "problems.HardwareClass", on_delete=models.CASCADE, related_name="boards"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    sources_public = models.BooleanField(default=False)
    version = models.PositiveBigIntegerField(
        default=0, help_text="bumped on every change of entries"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["problem", "hardware"], name="board_problem_hw")
        ]

    def __str__(self) -> str:
        return f"{self.problem} on {self.hardware_id}"


class BoardEntry(models.Model):
    """A user's best valid run on a board (see boards.services.board_entry_refresh).

    Times in ms are geometric means over the run's public workloads; `intervals` maps each
    workload id to the [low, high] confidence interval of its time, used to show ties;
    `workloads` maps each workload id to its own figures (time_ms, sol_ms, sol_score,
    eager_ms), the board's per-workload columns. `fingerprint` is the sketch of the normalised
    source (boards.likeness) that flags a near-identical copy of an earlier public entry.
    """

    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="entries")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE)
    submission = models.ForeignKey("submissions.Submission", on_delete=models.CASCADE)
    sol_score = models.FloatField()
    time_ms = models.FloatField(null=True)
    sol_ms = models.FloatField(null=True)
    fraction_of_sol = models.FloatField(null=True)
    speedup_eager = models.FloatField(null=True)
    speedup_compile = models.FloatField(null=True)
    intervals = models.JSONField(default=dict)
    workloads = models.JSONField(default=dict)
    fingerprint = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["board", "user"], name="board_entry_user")]
        indexes = [models.Index(fields=["board", "-sol_score"], name="board_entry_rank")]
