from __future__ import annotations

from django.db import models


class Suite(models.Model):
    """A pinned suite as loaded by `manage.py sync_suites`; `hash` is its manifest hash."""

    name = models.CharField(max_length=100, primary_key=True)
    hash = models.CharField(max_length=64)
    synced_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.hash[:12]})"


class HardwareClass(models.Model):
    """A hardware class (`nvidia-h100`, `npu-sim-v1`, ...) and the languages it runs."""

    name = models.CharField(max_length=50, primary_key=True)
    vendor = models.CharField(max_length=20)
    device = models.CharField(max_length=20, help_text="cuda | rocm | npu-sim | cpu")
    languages = models.JSONField(default=list)
    spec = models.JSONField(
        default=dict, help_text="peaks (FLOP/s by dtype/unit), bandwidth (bytes/s), ..."
    )
    active = models.BooleanField(default=True)

    class Meta:
        verbose_name_plural = "hardware classes"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Problem(models.Model):
    """A problem of a suite. `workloads` holds id, axes, dtype, model, small, flops and bytes."""

    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="problems")
    name = models.CharField(max_length=100)
    category = models.CharField(max_length=30)
    description = models.TextField(blank=True)
    signature = models.CharField(max_length=300)
    languages = models.JSONField(default=list)
    dtypes = models.JSONField(default=list)
    compute_unit = models.CharField(max_length=20, default="vector")
    workloads = models.JSONField(default=list)
    sol_table = models.JSONField(default=dict, blank=True, help_text="hardware -> SOL per workload")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["suite", "name"], name="problem_suite_name")]
        ordering = ["suite_id", "name"]

    def __str__(self) -> str:
        return f"{self.suite_id}/{self.name}"
