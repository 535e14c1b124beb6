"""Request parsing: JSON bodies whose strings PostgreSQL could not store, or nested deeper than
MAX_JSON_DEPTH, are refused up front.

PostgreSQL's text and jsonb types cannot hold NUL (\\u0000), and UTF-8 cannot encode unpaired
surrogates; either would otherwise surface as a 500 from deep inside a query. A 400 that names the
problem is what the client needs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, FormParser, JSONParser, MultiPartParser


class StorableJSONParser(JSONParser):
    """JSONParser that rejects strings (keys too) with NUL or unpaired surrogate characters."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(
                f"JSON parse error: nested deeper than {MAX_JSON_DEPTH} levels; flatten it"
            ) from None
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


MAX_JSON_DEPTH = 64  # nesting of arrays and objects; no document the farm reads comes close


def first_unstorable(value: Any, path: str = "body") -> str | None:
    """Where the first string holding a NUL or an unpaired surrogate is, or where the nesting
    passes MAX_JSON_DEPTH; None when all is well."""
    for text, where in _strings(value, path):
        found = _too_deep(where) if text is None else _describe(text, where)
        if found:
            return found
    return None


def _strings(value: Any, path: str) -> Iterator[tuple[str | None, str]]:
    """Every string (keys too) with its path, depth first, walked with a stack (no recursion:
    a deep body must not exhaust Python's stack); (None, path) where the nesting passes
    MAX_JSON_DEPTH."""
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            yield item, where
        elif isinstance(item, dict | list) and depth >= MAX_JSON_DEPTH:
            yield None, where
        elif isinstance(item, dict):
            for key in item:
                yield str(key), f"{where} key"
            stack.extend((v, f"{where}.{k}", depth + 1) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend(
                (v, f"{where}[{i}]", depth + 1) for i, v in reversed(list(enumerate(item)))
            )


def _too_deep(path: str) -> str:
    return f"{path[:120]} is nested deeper than {MAX_JSON_DEPTH} levels"


def _describe(text: str, path: str) -> str | None:
    if "\x00" in text:
        return f"{path[:120]} contains a NUL character"
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        return f"{path[:120]} contains an unpaired surrogate character"
    return None
