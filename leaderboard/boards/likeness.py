"""How alike two kernel sources are, after the edits that do not change a kernel: comments,
blank lines, layout, quoting, docstrings and the names of local variables, parameters and
functions.

A source becomes a token stream (Python's tokenizer) in which each name that is not an
attribute, a keyword argument, a keyword or a builtin is replaced by its order of first
appearance within its top-level definition (`x, y = y, x` and `a, b = b, a` read the same), and
each string by a placeholder; the stream is cut into shingles of SHINGLE tokens and each shingle
hashed. A source's fingerprint is the SKETCH smallest hashes (a bottom-k sketch), so a board
stores a few kilobytes per entry and compares entries without reading their sources again.
`likeness` estimates the Jaccard similarity of two shingle sets from their sketches (exact when
both sources have at most SKETCH shingles).
"""

from __future__ import annotations

import builtins
import hashlib
import io
import keyword
import tokenize
from collections.abc import Collection, Set

SHINGLE = 5  # tokens per shingle
SKETCH = 256  # hashes kept per source
# A later public entry at least this alike to an earlier one is flagged as a copy of it. A
# retyped copy (new names, comments, layout) measures 1.0; the same algorithm written by someone
# else differs in its tiling, masks or loop order and measures well under it (tests/leaderboard/
# boards/test_likeness.py).
COPY_LIKENESS = 0.9

_SKIP = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}
_TOP_LEVEL_STARTS = frozenset({"def", "class", "@", "async"})
_KEPT_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins))


def normalised_tokens(source: str) -> list[str]:
    """The source's tokens with local names numbered and strings blanked; [] when it does not
    tokenize (a source that does not parse has no fingerprint and is never flagged)."""
    try:
        tokens = [
            t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in _SKIP
        ]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    names: dict[str, str] = {}
    out: list[str] = []
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.start[1] == 0 and tok.string in _TOP_LEVEL_STARTS:
            names = {}  # each top-level definition numbers its names afresh
        depth += (tok.string in "([{") - (tok.string in ")]}") if tok.type == tokenize.OP else 0
        kept = _kept(tokens, i, depth)
        out.append(tok.string if kept else _normalised(tok, names))
    return out


def _kept(tokens: list[tokenize.TokenInfo], i: int, depth: int) -> bool:
    """Names read as written: attributes (after a dot) and keyword arguments (`mask=`), the
    API a kernel calls, which a copy cannot rename."""
    before = tokens[i - 1].string if i else ""
    after = tokens[i + 1].string if i + 1 < len(tokens) else ""
    return before == "." or (depth > 0 and after == "=")


def _normalised(tok: tokenize.TokenInfo, names: dict[str, str]) -> str:
    if tok.type == tokenize.STRING:
        return "<str>"
    if tok.type == tokenize.NAME and tok.string not in _KEPT_NAMES:
        return names.setdefault(tok.string, f"<n{len(names)}>")
    return tok.string


def fingerprint(source: str) -> list[int]:
    """The bottom-SKETCH sketch of the source's shingle hashes, ascending (53-bit ints)."""
    tokens = normalised_tokens(source)
    shingles = {
        "\x00".join(tokens[i : i + SHINGLE]) for i in range(max(1, len(tokens) - SHINGLE + 1))
    }
    hashes = {_hash(s) for s in shingles if s}
    return sorted(hashes)[:SKETCH]


def likeness(a: Collection[int], b: Collection[int]) -> float:
    """Estimated Jaccard similarity (0..1) of the shingle sets two fingerprints come from: of the
    SKETCH smallest hashes of their union, the share both hold. 0.0 when either is empty."""
    if not a or not b:
        return 0.0
    sa, sb = _as_set(a), _as_set(b)
    union = sorted(sa | sb)[:SKETCH]
    # a hash of the union's sketch that a source holds is in that source's own sketch too (it
    # ranks no lower among the source's hashes than among the union's)
    return sum(1 for h in union if h in sa and h in sb) / len(union)


def likeness_at_most(a: frozenset[int], b: frozenset[int]) -> float:
    """An upper bound of likeness(a, b) that costs one set intersection (a board compares every
    entry with every earlier public one; the exact figure is worth computing only above the
    flag's threshold): both sketches' common hashes over the length of the union's sketch."""
    common = len(a & b)
    return common / min(SKETCH, len(a) + len(b) - common) if common else 0.0


def _as_set(values: Collection[int]) -> Set[int]:
    return values if isinstance(values, Set) else frozenset(values)


def _hash(shingle: str) -> int:
    """53 bits of BLAKE2b: an integer every JSON reader keeps exactly."""
    digest = hashlib.blake2b(shingle.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 11
