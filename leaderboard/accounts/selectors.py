from __future__ import annotations

from django.conf import settings
from django.db.models import Q, QuerySet

from leaderboard.accounts.models import ApiToken, Quota


def api_token_list(*, user) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user, revoked_at__isnull=True).order_by("-created_at")


def quota_runs_per_hour(*, user, hardware: str) -> int | None:
    """Runs per hour `user` may queue on `hardware`; None means unlimited (staff)."""
    if user.is_staff:
        return None
    rows = Quota.objects.filter(Q(user=user) | Q(user__isnull=True), hardware_id=hardware)
    by_owner = {row.user_id: row.runs_per_hour for row in rows}
    if user.pk in by_owner:
        return by_owner[user.pk]
    return by_owner.get(None, settings.FARM_QUOTA_RUNS_PER_HOUR)
