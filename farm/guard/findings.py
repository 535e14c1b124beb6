"""A guard finding: what the guard saw, how serious it is, and where."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["reject", "flag"]


@dataclass(frozen=True)
class Finding:
    """code: UPPER_SNAKE rule code (see farm.guard.rules). severity: "reject" (the submission is
    REJECTED) or "flag" (kept in the result for review; the verdict does not change).
    detail: a sentence for a person. line: 1-based source line, or None when not from source."""

    code: str
    severity: Severity
    detail: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def rejects(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "reject"]
