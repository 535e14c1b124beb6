from django.contrib import admin

from leaderboard.runs.models import Result, Run, WorkloadResult
from leaderboard.runs.services import runs_requeue


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
    ]
    list_filter = ["state", "hardware", "mode", "verdict"]
    raw_id_fields = ["submission", "user", "node"]
    actions = ["requeue"]

    @admin.action(description="Requeue (deletes the stored result)")
    def requeue(self, request, queryset) -> None:  # type: ignore[no-untyped-def]
        runs_requeue(run_ids=list(queryset.values_list("id", flat=True)))


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
