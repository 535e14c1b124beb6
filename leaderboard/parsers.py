"""Request parsing: JSON bodies whose strings PostgreSQL could not store are refused up front.

PostgreSQL's text and jsonb types cannot hold NUL (\\u0000), and UTF-8 cannot encode unpaired
surrogates; either would otherwise surface as a 500 from deep inside a query. A 400 that names the
problem is what the client needs.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, FormParser, JSONParser, MultiPartParser


class StorableJSONParser(JSONParser):
    """JSONParser that rejects strings (keys too) with NUL or unpaired surrogate characters."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        _refuse(first_unstorable(data))
        return data


class StorableFormParser(FormParser):
    """FormParser with the same refusal for every field value."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        _refuse(first_unstorable(dict(data.lists())))
        return data


class StorableMultiPartParser(MultiPartParser):
    """MultiPartParser with the same refusal for every form field (files are checked where
    they are used: a kernel source with a NUL is refused by the submission validation)."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        parsed: DataAndFiles = super().parse(stream, media_type, parser_context)
        _refuse(first_unstorable(dict(parsed.data.lists())))
        return parsed


def _refuse(bad: str | None) -> None:
    if bad is not None:
        raise ParseError(f"{bad}; send plain UTF-8 text")


def first_unstorable(value: Any, path: str = "body") -> str | None:
    """Where the first string holding a NUL or an unpaired surrogate is, or None."""
    if isinstance(value, str):
        return _describe(value, path)
    if isinstance(value, dict):
        for key, item in value.items():
            found = _describe(str(key), f"{path} key") or first_unstorable(item, f"{path}.{key}")
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = first_unstorable(item, f"{path}[{i}]")
            if found:
                return found
    return None


def _describe(text: str, path: str) -> str | None:
    if "\x00" in text:
        return f"{path[:120]} contains a NUL character"
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        return f"{path[:120]} contains an unpaired surrogate character"
    return None
