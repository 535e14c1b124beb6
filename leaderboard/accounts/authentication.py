"""DRF authentication for users by hashed API token (`Authorization: Bearer fu_...`)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions

from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.tokens import NODE_PREFIX, bearer_key, token_hash

_TOUCH_EVERY = timedelta(minutes=1)


class ApiTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):  # type: ignore[no-untyped-def]
        key = bearer_key(authentication.get_authorization_header(request).decode("latin-1"))
        if key is None:
            return None
        if key.startswith(NODE_PREFIX):
            raise exceptions.AuthenticationFailed("node tokens work only on /api/agent/ endpoints")
        token = (
            ApiToken.objects.select_related("user")
            .filter(key_hash=token_hash(key), revoked_at__isnull=True)
            .first()
        )
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed(
                "invalid or revoked API token; create one at /api/tokens/"
            )
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > _TOUCH_EVERY:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request) -> str:  # type: ignore[no-untyped-def]
        return 'Bearer realm="api"'
