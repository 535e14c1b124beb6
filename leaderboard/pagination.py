"""Cursor pages of the list endpoints: typed cursors and the page shape in the OpenAPI schema.

DRF's CursorPagination decodes any base64 `p=` position and hands it to the database, so a
well-formed cursor with a position that is not an id (`p=abc`) surfaced as a 500. Positions here
are ids: anything else is the same 404 "Invalid cursor" as a malformed cursor.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination


class IdCursorPagination(CursorPagination):
    """Newest first by id; `page_size` per subclass."""

    ordering = "-id"

    def decode_cursor(self, request: Any) -> Cursor | None:
        cursor = super().decode_cursor(request)
        position = None if cursor is None else cursor.position
        if position is not None and not str(position).isdigit():
            raise NotFound(self.invalid_cursor_message)
        return cursor


def cursor_page(name: str, item: serializers.Serializer) -> serializers.Serializer:
    """The schema of one page of `item`s: {next, previous, results}."""
    return inline_serializer(
        name,
        {
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item,
        },
    )
