"""Errors the farm shows to people: each says what was wrong and what to do about it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class FarmError(Exception):
    """An error with a message meant for a person (no traceback needed).

    `hint` says what to do; the CLI prints `error: <message>` and then the hint.
    """

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}; {self.hint}"


class SuiteError(FarmError):
    """A suite or problem file is malformed, missing, or does not match its manifest."""


class UnknownNameError(FarmError):
    """A problem, suite, hardware class or device name that does not exist."""


class SubmissionError(FarmError):
    """The submitted file cannot be used (does not parse, no entry point, too large, ...)."""


def did_you_mean(name: str, choices: Iterable[str]) -> str | None:
    """Return "did you mean 'x'?" for the closest choice, or None when nothing is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def unknown(kind: str, name: str, choices: Iterable[str], where: str = "") -> UnknownNameError:
    """Build the standard "X 'name' not in Y; did you mean 'z'?" error."""
    choices = sorted(choices)
    hint = did_you_mean(name, choices)
    if hint is None:
        listed = ", ".join(choices[:12]) + (", ..." if len(choices) > 12 else "")
        hint = f"known: {listed}" if choices else "none are defined"
    return UnknownNameError(f"{kind} '{name}' not in {where or 'the farm'}", hint=hint)
