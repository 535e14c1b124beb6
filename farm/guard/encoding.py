"""What text Python runs for a submission file: its PEP 263 source encoding.

The interpreter decodes a source file with the encoding its coding cookie names (a comment
`coding: <name>` on line 1, or line 2 after a comment line) and only falls back to UTF-8 when
there is none. The static guard reads the file as UTF-8, so a cookie that names another codec
(`coding: utf-7`) makes Python run text the guard never read. Rather than re-implement every
codec's view, the farm accepts only sources that Python itself decodes as UTF-8.
Reference: PEP 263 (https://peps.python.org/pep-0263/), `tokenize.detect_encoding`.
"""

from __future__ import annotations

import codecs
import io
import tokenize


class SourceEncodingError(ValueError):
    """The source declares an encoding other than UTF-8, or one Python does not know."""


def declared_encoding(source: str | bytes) -> str:
    """The codec Python would decode `source` with ("utf-8" when there is no cookie or a BOM).

    Uses `tokenize.detect_encoding`, the function the interpreter's own tools use, on the
    source's first two lines. Raises SourceEncodingError for an unknown codec or a BOM
    that disagrees with the cookie (Python refuses such a file too)."""
    data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceEncodingError(str(exc)) from None
    return codecs.lookup(encoding).name


def require_utf8(source: str | bytes) -> None:
    """Raise SourceEncodingError unless Python decodes `source` as UTF-8 (BOM allowed)."""
    name = declared_encoding(source)
    if name not in ("utf-8", "utf-8-sig"):
        raise SourceEncodingError(
            f"declares the source encoding {name!r}; Python would run its {name} decoding, "
            "not the UTF-8 text that was checked"
        )
