from django.contrib import admin

from leaderboard.problems.models import HardwareClass, Problem, Suite


@admin.register(Suite)
class SuiteAdmin(admin.ModelAdmin):
    list_display = ["name", "hash", "synced_at"]
    readonly_fields = ["hash", "synced_at"]


@admin.register(Problem)
class ProblemAdmin(admin.ModelAdmin):
    list_display = ["name", "suite", "category", "compute_unit"]
    list_filter = ["suite", "category"]
    search_fields = ["name"]


@admin.register(HardwareClass)
class HardwareClassAdmin(admin.ModelAdmin):
    list_display = ["name", "vendor", "device", "active"]
    list_editable = ["active"]
