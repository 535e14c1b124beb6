"""API tokens: random keys shown once, stored only as their sha256."""

from __future__ import annotations

import hashlib
import secrets

USER_PREFIX = "fu_"  # user tokens
NODE_PREFIX = "fn_"  # node tokens


def token_new(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)


def token_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def bearer_key(header: str) -> str | None:
    """The key of an `Authorization: Bearer <key>` (or `Token <key>`) header, else None."""
    parts = header.split()
    if len(parts) == 2 and parts[0].lower() in {"bearer", "token"}:
        return parts[1]
    return None
