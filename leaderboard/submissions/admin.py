from django.contrib import admin

from leaderboard.runs.models import Run
from leaderboard.submissions.models import Source, Submission
from leaderboard.submissions.services import submission_mark_hacked


class RunInline(admin.TabularInline):
    model = Run
    fields = [
        "hardware",
        "mode",
        "state",
        "attempt",
        "node",
        "verdict",
        "sol_score",
        "failure_code",
    ]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ["id", "user", "problem", "mode", "language", "private", "hacked", "created_at"]
    list_filter = ["hacked", "private", "mode", "language", "problem"]
    search_fields = ["user__username", "label", "source__sha256"]
    readonly_fields = ["source", "suite", "suite_hash", "problem", "mode", "language", "hacked_at"]
    raw_id_fields = ["user"]
    inlines = [RunInline]
    actions = ["mark_hacked", "unmark_hacked"]

    @admin.action(description="Mark hacked (off every board; evidence kept)")
    def mark_hacked(self, request, queryset) -> None:
        for submission in queryset:
            submission_mark_hacked(
                submission=submission, hacked=True, note=f"marked by {request.user}"
            )

    @admin.action(description="Unmark hacked")
    def unmark_hacked(self, request, queryset) -> None:
        for submission in queryset:
            submission_mark_hacked(submission=submission, hacked=False)

    def save_model(self, request, obj, form, change) -> None:
        if change and "hacked" in form.changed_data:
            submission_mark_hacked(submission=obj, hacked=obj.hacked, note=obj.hacked_note)
        else:
            super().save_model(request, obj, form, change)


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ["sha256", "size", "stored_at", "created_at"]
    readonly_fields = ["sha256", "size", "stored_at", "created_at"]
