"""DRF authentication for users by hashed API token (`Authorization: Bearer fu_...`)."""

from __future__ import annotations

import functools
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
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
        token = token_with_user(key_hash=token_hash(key))
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


def token_with_user(*, key_hash: str) -> ApiToken | None:
    """The unrevoked token with this key hash and its user, read in one query, or None.

    Every token-authenticated request starts here, so this runs SQL built once per process
    (_token_lookup) and makes the two instances with Model.from_db, as the ORM does: building
    the query with the ORM on each request cost about four times the CPU."""
    sql, token_fields, user_fields = _token_lookup()
    with connection.cursor() as cur:
        cur.execute(sql, [key_hash])
        row = cur.fetchone()
    if row is None:
        return None
    values = [_convert(v, convs) for v, convs in zip(row, _converters())]
    n = len(token_fields)
    token = ApiToken.from_db(connection.alias, token_fields, values[:n])
    token.user = get_user_model().from_db(connection.alias, user_fields, values[n:])
    return token


def _convert(value: Any, converters: list[tuple[Any, Any]]) -> Any:
    for convert, column in converters:
        value = convert(value, column, connection)
    return value


@functools.cache
def _converters() -> list[list[tuple[Any, Any]]]:
    """Per column of _token_lookup's row, the converters the ORM would apply to it (the
    backend's and the field's: SQLite returns datetimes as text, for one)."""
    out = []
    for model in (ApiToken, get_user_model()):
        for f in model._meta.concrete_fields:
            column = f.get_col(model._meta.db_table)
            convs = connection.ops.get_db_converters(column) + f.get_db_converters(connection)
            out.append([(c, column) for c in convs])
    return out


@functools.cache
def _token_lookup() -> tuple[str, list[str], list[str]]:
    """(SQL, token field names, user field names): every column of the token, then of its
    user, in one row, for a key hash given as the one parameter."""
    token, user = ApiToken._meta, get_user_model()._meta
    quote = connection.ops.quote_name
    columns = [f"t.{quote(f.column)}" for f in token.concrete_fields]
    columns += [f"u.{quote(f.column)}" for f in user.concrete_fields]
    sql = (
        f"SELECT {', '.join(columns)} FROM {token.db_table} t "
        f"JOIN {user.db_table} u ON u.{user.pk.column} = t.user_id "
        "WHERE t.key_hash = %s AND t.revoked_at IS NULL"
    )
    names = [f.attname for f in token.concrete_fields], [f.attname for f in user.concrete_fields]
    return sql, *names
