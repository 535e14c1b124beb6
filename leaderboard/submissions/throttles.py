"""Quotas: runs per user per hardware class per hour, enforced as a DRF throttle (429 with
Retry-After). Counted from the runs table, so the quota holds across server processes."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from django.utils import timezone
from rest_framework.throttling import BaseThrottle

from leaderboard.accounts.selectors import quota_runs_per_hour
from leaderboard.runs.models import Run

WINDOW = timedelta(hours=1)


def requested_runs(data: Any) -> Counter[str]:
    """Runs per hardware class a submit request asks for (malformed input counts nothing:
    validation reports it)."""
    items = data.get("submissions") if hasattr(data, "get") and "submissions" in data else [data]
    wanted: Counter[str] = Counter()
    for item in items if isinstance(items, list) else []:
        if not hasattr(item, "get"):
            continue
        hw = item.getlist("hardware") if hasattr(item, "getlist") else item.get("hardware")
        names = [hw] if isinstance(hw, str) else hw if isinstance(hw, list) else []
        wanted.update(dict.fromkeys(n for n in names if isinstance(n, str)).keys())
    return wanted


def quota_exceeded(*, user, wanted: Counter[str]) -> tuple[float, str] | None:
    """(seconds to wait, message) when queuing `wanted` runs would pass a quota, else None."""
    now = timezone.now()
    for hardware, count in wanted.items():
        limit = quota_runs_per_hour(user=user, hardware=hardware)
        if limit is None:
            continue
        recent = list(
            Run.objects.filter(
                user=user, hardware_id=hardware, created_at__gt=now - WINDOW, audit_of__isnull=True
            )
            .order_by("created_at")
            .values_list("created_at", flat=True)
        )
        excess = len(recent) + count - limit
        if excess > 0:
            wait = _wait(recent, excess, now)
            return wait, (
                f"quota for {hardware} is {limit} runs per hour and {len(recent)} were "
                f"queued in the last hour; this request asks for {count} more. Retry in "
                f"{int(wait)} s, or ask an operator for a larger quota"
            )
    return None


def _wait(recent: list, excess: int, now) -> float:
    """Seconds until enough of the `recent` runs leave the window."""
    if excess > len(recent):
        return WINDOW.total_seconds()
    return max(1.0, (recent[excess - 1] + WINDOW - now).total_seconds())


class HardwareQuotaThrottle(BaseThrottle):
    def __init__(self) -> None:
        self.retry_after: float | None = None

    def allow_request(self, request, view) -> bool:
        if request.method != "POST" or not request.user.is_authenticated:
            return True
        exceeded = quota_exceeded(user=request.user, wanted=requested_runs(request.data))
        if exceeded is None:
            return True
        self.retry_after, request.quota_detail = exceeded
        return False

    def wait(self) -> float | None:
        return self.retry_after
