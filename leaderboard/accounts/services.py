from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.tokens import USER_PREFIX, token_hash, token_new


def api_token_create(*, user: AbstractBaseUser, name: str = "default") -> tuple[ApiToken, str]:
    """Create a token; return it with its key (the only time the key is available)."""
    key = token_new(USER_PREFIX)
    token = ApiToken.objects.create(
        user=user, name=name, key_hash=token_hash(key), key_hint=key[:8]
    )
    return token, key


def api_token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
