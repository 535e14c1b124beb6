from django.contrib import admin, messages

from leaderboard.accounts.tokens import NODE_PREFIX, token_hash, token_new
from leaderboard.nodes.models import Node
from leaderboard.nodes.selectors import node_status
from leaderboard.nodes.services import node_token_rotate


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "status",
        "enabled",
        "draining",
        "last_heartbeat",
        "agent_version",
        "hostname",
    ]
    list_filter = ["enabled", "draining", "hardware"]
    readonly_fields = ["token_hash", "registered_at", "last_heartbeat", "devices", "current_runs"]
    actions = ["rotate_token", "drain", "undrain"]

    @admin.display(description="status")
    def status(self, node: Node) -> str:
        return node_status(node=node)

    @admin.action(description="Rotate the token (shown once)")
    def rotate_token(self, request, queryset) -> None:
        for node in queryset:
            key = node_token_rotate(node=node)
            self.message_user(request, f"{node.name}: new token {key}", messages.WARNING)

    @admin.action(description="Drain: finish current runs, claim nothing new")
    def drain(self, request, queryset) -> None:
        queryset.update(draining=True)

    @admin.action(description="Stop draining")
    def undrain(self, request, queryset) -> None:
        queryset.update(draining=False)

    def save_model(self, request, obj, form, change) -> None:
        if not change and not obj.token_hash:
            key = token_new(NODE_PREFIX)
            obj.token_hash = token_hash(key)
            self.message_user(request, f"{obj.name}: token {key} (shown once)", messages.WARNING)
        super().save_model(request, obj, form, change)
