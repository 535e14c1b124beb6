"""The static guard's token pass: guarded names hidden from the AST.

`getattr(torch.cuda.Event, "elapsed" + "_time")` or `"emit_despale"[::-1]` name a guarded
function without ever writing it. Per logical line, the contents of the string literals are
joined; a guarded name that appears in the join (or in its reverse) but inside no single literal
was built from pieces. String literals that decode as base64 to a guarded name are payloads.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import tokenize

from farm.guard import names as N
from farm.guard.findings import Finding
from farm.guard.rules import rule

_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]{16,}$")


def scan_tokens(source: str) -> list[Finding]:
    """Findings from string literals: split or reversed guarded names, base64 payloads."""
    findings = []
    for line, literals in _literals_by_logical_line(source):
        findings += _split_names(line, literals)
        findings += _encoded_payloads(line, literals)
    return findings


def _literals_by_logical_line(source: str) -> list[tuple[int, list[str]]]:
    lines: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 1
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.STRING:
                if not current:
                    start = tok.start[0]
                current.append(_literal_text(tok.string))
            elif tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER) and current:
                lines.append((start, current))
                current = []
    except (tokenize.TokenError, SyntaxError):
        pass
    if current:
        lines.append((start, current))
    return lines


def _literal_text(token: str) -> str:
    """The characters between the quotes (prefixes and escapes left as written)."""
    body = token.lstrip("rRbBuUfF")
    for quote in ('"""', "'''", '"', "'"):
        if body.startswith(quote) and body.endswith(quote) and len(body) >= 2 * len(quote):
            return body[len(quote) : -len(quote)]
    return body


def _split_names(line: int, literals: list[str]) -> list[Finding]:
    joined = "".join(literals)
    found = []
    for word in N.GUARDED_WORDS:
        if len(word) < 6:
            continue
        whole = any(word in lit for lit in literals)
        if word in joined and not whole and len(literals) > 1:
            found.append(_finding(f"builds '{word}' out of string pieces", line))
        elif word in joined[::-1] and not any(
            word in lit[::-1] for lit in literals if lit != joined
        ):
            found.append(_finding(f"spells '{word}' backwards", line))
    return found


def _encoded_payloads(line: int, literals: list[str]) -> list[Finding]:
    found = []
    for lit in literals:
        if not _BASE64.match(lit):
            continue
        try:
            decoded = base64.b64decode("".join(lit.split()), validate=True).decode(
                "utf-8", "ignore"
            )
        except (binascii.Error, ValueError):
            continue
        hits = [w for w in N.GUARDED_WORDS if w in decoded] + [
            w for w in ("import", "exec") if w in decoded
        ]
        if hits:
            r = rule("DYNAMIC_CODE")
            detail = f"a base64 literal decodes to code mentioning {hits[0]!r}: {r.why}"
            found.append(Finding("DYNAMIC_CODE", r.severity, detail, line))
    return found


def _finding(detail: str, line: int) -> Finding:
    r = rule("OBFUSCATED_ATTRIBUTE")
    return Finding("OBFUSCATED_ATTRIBUTE", r.severity, f"{detail}: {r.why}", line)
