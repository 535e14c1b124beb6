from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from farm.result import FARM_OUTCOMES, Interval

LOST = "LOST"  # failure code of a run taken back from a node that stopped heartbeating
CANCELLED = "CANCELLED"  # failure code of a run its owner (or an operator) cancelled
NO_NODE = "NO_NODE"  # failure code of a queued run that no node of its class served in time
FARM_VERDICTS = tuple(sorted(v.value for v in FARM_OUTCOMES))


class Run(models.Model):
    """One evaluation of a submission on one hardware class in one mode.

    queued -> claimed -> running -> done | failed; a claimed or running run whose node stops
    heartbeating becomes lost and is queued again. `attempt` counts claims; `node_faults` counts
    the attempts that ended by a fault of the node or its host (lost, a dead slot, a harness
    that failed, an INCONCLUSIVE or NODE_FAULT result): they are not charged to the submission
    (`charged_attempts`), are bounded by FARM_MAX_NODE_FAULTS, and a NODE_FAULT is retried on
    another node (`fault_nodes`). Charged attempts are bounded by FARM_MAX_ATTEMPTS. `category`
    says what a finished run's outcome is about (docs/outcomes.md). `user` and `problem` copy
    the submission's for fast filters.

    An audit run (`audit_of` set) re-evaluates a leaderboard run that would take first place on
    its board, on another node of the class; the audited run's `audit` says where that stands
    (leaderboard.judging.audits). Audit runs never count on a board themselves.
    """

    class State(models.TextChoices):
        QUEUED = "queued"
        CLAIMED = "claimed"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        LOST = "lost"

    class Audit(models.TextChoices):
        NONE = "", "not audited"
        PENDING = "pending"
        CONFIRMED = "confirmed"
        HELD = "held"

    class Category(models.TextChoices):
        """What a run's outcome is about (`category`, derived; docs/outcomes.md)."""

        NONE = ""  # not finished
        KERNEL = "kernel"
        FARM = "farm"  # the farm's own outcome

    ACTIVE = (State.CLAIMED, State.RUNNING)
    TERMINAL = (State.DONE, State.FAILED)
    SHOWN_AUDIT = (Audit.NONE, Audit.CONFIRMED)

    submission = models.ForeignKey(
        "submissions.Submission", on_delete=models.CASCADE, related_name="runs"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="runs"
    )
    problem = models.ForeignKey("problems.Problem", on_delete=models.PROTECT, related_name="runs")
    hardware = models.ForeignKey(
        "problems.HardwareClass", on_delete=models.PROTECT, related_name="runs"
    )
    mode = models.CharField(max_length=20)
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    attempt = models.PositiveIntegerField(default=0, help_text="number of claims so far")
    node_faults = models.PositiveIntegerField(
        default=0, help_text="attempts that ended by a fault of the node or host (not charged)"
    )
    fault_nodes = models.JSONField(
        default=list, blank=True, help_text="ids of nodes whose attempt ended in a NODE_FAULT"
    )
    node = models.ForeignKey(
        "nodes.Node", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    attempt_node = models.ForeignKey(
        "nodes.Node",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="the node that claimed the latest attempt (kept after release)",
    )
    device_index = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="the GPU of its node that claimed the latest attempt (vendor index)",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True, help_text="last handed to the broker")
    claimed_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    verdict = models.CharField(max_length=20, blank=True)
    sol_score = models.FloatField(null=True, blank=True)
    failure_code = models.CharField(max_length=50, blank=True)
    failure_detail = models.TextField(blank=True)
    audit_of = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="audit_run",
        help_text="set on an audit run: the run it re-evaluates",
    )
    audit = models.CharField(
        max_length=10,
        choices=Audit.choices,
        default=Audit.NONE,
        blank=True,
        help_text="the audit of this run: pending or held runs do not show on boards",
    )
    audit_detail = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "hardware", "mode"],
                condition=Q(audit_of__isnull=True),
                name="run_submission_hw_mode",
            )
        ]
        indexes = [
            models.Index(fields=["state", "hardware"], name="run_state_hw"),
            models.Index(fields=["user", "-id"], name="run_user_recent"),
            models.Index(fields=["user", "hardware", "created_at"], name="run_quota"),
            models.Index(fields=["problem", "hardware", "user"], name="run_board"),
            models.Index(fields=["audit"], name="run_audit", condition=~Q(audit="")),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.hardware_id}, {self.state})"

    @property
    def category(self) -> str:
        """What the finished run's outcome is about (docs/outcomes.md): `kernel` for a done run
        whose verdict blames the submission, `farm` for the farm's own verdicts (UNSUPPORTED,
        INCONCLUSIVE, NODE_FAULT) and a failed run; "" before it finishes. Filter with
        `category_q`."""
        return Run.category_of(state=self.state, verdict=self.verdict)

    @staticmethod
    def category_of(*, state: str, verdict: str) -> str:
        """`category` of a run in `state` with `verdict` (for rows read without a model)."""
        if state == Run.State.FAILED:
            return Run.Category.FARM
        if state != Run.State.DONE:
            return Run.Category.NONE
        return Run.Category.FARM if verdict in FARM_VERDICTS else Run.Category.KERNEL

    @staticmethod
    def category_q(category: str) -> Q:
        """The runs whose `category` is `category` (an unknown one matches none)."""
        done, farm = Q(state=Run.State.DONE), Q(verdict__in=FARM_VERDICTS)
        return {
            Run.Category.KERNEL: done & ~farm,
            Run.Category.FARM: Q(state=Run.State.FAILED) | (done & farm),
            Run.Category.NONE: ~Q(state__in=Run.TERMINAL),
        }.get(category, Q(pk__in=[]))

    @property
    def charged_attempts(self) -> int:
        """Attempts charged to the submission: claims that did not end by a node fault."""
        return max(0, self.attempt - self.node_faults)

    def attempt_open(self, attempt: int) -> bool:
        """What `attempt` produces (its result, its artifacts) may still arrive: it is the run's
        latest attempt and the run is active. A run taken back (its lease expired) is closed
        to the attempt that lost it."""
        return self.attempt == attempt and self.state in Run.ACTIVE


class Result(models.Model):
    """The result document a node posted for a run, as received, plus the server's judgement."""

    run = models.OneToOneField(
        Run, on_delete=models.CASCADE, primary_key=True, related_name="result"
    )
    node = models.ForeignKey("nodes.Node", null=True, on_delete=models.SET_NULL)
    attempt = models.PositiveIntegerField()
    document = models.JSONField()
    digest = models.CharField(max_length=64, help_text="sha256 of the canonical document")
    verdict = models.CharField(
        max_length=20, help_text="the node's verdict, or REJECTED by the server"
    )
    sol_score = models.FloatField(null=True, blank=True)
    server_reasons = models.JSONField(default=list, blank=True)
    secret_passed = models.BooleanField(
        default=False, help_text="secret-seed workloads were run and all of them PASSED"
    )
    received_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"result of run {self.run_id}: {self.verdict}"


class WorkloadResult(models.Model):
    """One workload row of a result document. Times in milliseconds."""

    result = models.ForeignKey(Result, on_delete=models.CASCADE, related_name="workloads")
    workload_id = models.CharField(max_length=100)
    secret = models.BooleanField(
        default=False, help_text="a secret-seed workload (leaderboard mode)"
    )
    status = models.CharField(max_length=20)
    time_ms = models.FloatField(null=True, blank=True)
    ci_low_ms = models.FloatField(null=True, blank=True)
    ci_high_ms = models.FloatField(null=True, blank=True)
    sol_ms = models.FloatField(null=True, blank=True, help_text="the server's SOL bound")
    sol_score = models.FloatField(null=True, blank=True)
    baseline_eager_ms = models.FloatField(null=True, blank=True)
    baseline_compile_ms = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    @property
    def interval(self) -> Interval | None:
        """The confidence interval of `time_ms` the node sent (farm.result.Interval)."""
        if self.ci_low_ms is None or self.ci_high_ms is None:
            return None
        return Interval(self.ci_low_ms, self.ci_high_ms)
