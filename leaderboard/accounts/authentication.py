"""DRF authentication for users by hashed API token (`Authorization: Bearer fu_...`)."""

from __future__ import annotations

import functools
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone
from rest_framework import authentication, exceptions

from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.tokens import NODE_PREFIX, bearer_key, token_hash
from leaderboard.compiled import CompiledValues

_TOUCH_EVERY = timedelta(minutes=1)


class ApiTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        key = bearer_key(authentication.get_authorization_header(request).decode("latin-1"))
        if key is None:
            return None
        if key.startswith(NODE_PREFIX):
            raise exceptions.AuthenticationFailed("node tokens work only on /api/agent/ endpoints")
        token = token_with_user(key_hash=token_hash(key))
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed(
                "invalid or revoked API token; create one at /api/tokens/"
            )
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > _TOUCH_EVERY:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


def token_with_user(*, key_hash: str) -> ApiToken | None:
    """The unrevoked token with this key hash and its user, read in one query, or None.

    Every token-authenticated request starts here, so this runs a query compiled once per
    process (leaderboard.compiled) and makes the two instances with Model.from_db, as the ORM
    does: building the query with the ORM on each request cost about four times the CPU."""
    query, token_fields, user_fields = _token_query()
    row = query.fetch_one(key_hash)
    if row is None:
        return None
    token = ApiToken.from_db(connection.alias, token_fields, [row[f] for f in token_fields])
    values = [row[f"user__{f}"] for f in user_fields]
    token.user = get_user_model().from_db(connection.alias, user_fields, values)
    return token


_KEY = "key-hash-placeholder"


@functools.cache
def _token_query() -> tuple[CompiledValues, list[str], list[str]]:
    """Every column of the token and of its user, in one row, for a key hash."""
    token_fields = [f.attname for f in ApiToken._meta.concrete_fields]
    user_fields = [f.attname for f in get_user_model()._meta.concrete_fields]
    columns = (*token_fields, *(f"user__{f}" for f in user_fields))
    qs = ApiToken.objects.filter(key_hash=_KEY, revoked_at=None).values(*columns)
    return CompiledValues.of(qs, columns, placeholders=(_KEY,)), token_fields, user_fields
