from django.contrib import admin

from leaderboard.accounts.models import ApiToken, Quota


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["user", "name", "key_hint", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["key_hash", "key_hint", "created_at", "last_used_at"]
    search_fields = ["user__username", "name"]


@admin.register(Quota)
class QuotaAdmin(admin.ModelAdmin):
    list_display = ["user", "hardware", "runs_per_hour"]
    list_filter = ["hardware"]
