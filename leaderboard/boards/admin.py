from django.contrib import admin

from leaderboard.boards.models import Board, BoardEntry


@admin.register(Board)
class BoardAdmin(admin.ModelAdmin):
    list_display = ["problem", "hardware", "owner", "sources_public"]
    list_filter = ["hardware", "sources_public"]
    list_editable = ["sources_public"]


@admin.register(BoardEntry)
class BoardEntryAdmin(admin.ModelAdmin):
    list_display = ["board", "user", "sol_score", "time_ms", "run", "updated_at"]
    raw_id_fields = ["run", "submission"]
    list_filter = ["board__hardware"]
