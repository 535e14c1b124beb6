from django.contrib import admin

from leaderboard.artifacts.models import Artifact


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ["key", "run", "attempt", "name", "reported", "created_at"]
    raw_id_fields = ["run"]
