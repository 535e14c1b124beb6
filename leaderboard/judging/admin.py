"""The admin of runs and results, with the operator's actions (leaderboard.judging.operator)."""

from django.contrib import admin, messages

from leaderboard.judging.operator import audit_release, audit_rerun, runs_requeue
from leaderboard.runs.models import Result, Run, WorkloadResult


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "submission",
        "hardware",
        "mode",
        "state",
        "attempt",
        "node",
        "verdict",
        "sol_score",
        "audit",
        "audit_of",
    ]
    list_filter = ["state", "hardware", "mode", "verdict", "audit"]
    raw_id_fields = ["submission", "user", "node", "audit_of"]
    actions = ["requeue", "release_audit", "rerun_audit"]

    @admin.action(description="Requeue (deletes the stored result)")
    def requeue(self, request, queryset) -> None:
        runs_requeue(run_ids=list(queryset.values_list("id", flat=True)))

    @admin.action(description="Release held audits (the runs show on their boards)")
    def release_audit(self, request, queryset) -> None:
        n = sum(audit_release(run, by=request.user.get_username()) for run in queryset)
        self.message_user(request, f"{n} held runs released", messages.SUCCESS)

    @admin.action(description="Re-run the audit on another node")
    def rerun_audit(self, request, queryset) -> None:
        n = sum(audit_rerun(run) for run in queryset)
        self.message_user(request, f"{n} audits sent again", messages.SUCCESS)


class WorkloadInline(admin.TabularInline):
    model = WorkloadResult
    extra = 0
    can_delete = False


@admin.register(Result)
class ResultAdmin(admin.ModelAdmin):
    list_display = ["run", "verdict", "sol_score", "node", "attempt", "received_at"]
    list_filter = ["verdict"]
    raw_id_fields = ["run", "node"]
    inlines = [WorkloadInline]
