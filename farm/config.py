"""Typed readers of the environment, shared by every process of the farm (the server's settings
adapt them in leaderboard/env.py, the agent's in agents/config.py), and the farm's one home.

A value that cannot be used raises the caller's error type (EnvError unless the reader was made
with another) naming the variable and what it must be, so a misconfigured process stops at
start-up. Unset and blank values mean the default.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from farm.errors import FarmError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class EnvError(FarmError):
    """An environment variable holds a value that cannot be used."""


def farm_home() -> Path:
    """The farm's own data on this machine (suites, baselines, an agent's token and state):
    FARM_HOME, default ~/.local/share/farm."""
    home = os.environ.get("FARM_HOME", "").strip()
    return Path(home or Path.home() / ".local" / "share" / "farm").expanduser()


class Env:
    """Reads variables of `environ` (default os.environ, read at each call); a bad value raises
    `error(message)`."""

    def __init__(
        self,
        error: Callable[[str], Exception] = EnvError,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.error = error
        self.environ = environ

    def raw(self, name: str) -> str | None:
        """The value, stripped; None when unset or blank."""
        value = (os.environ if self.environ is None else self.environ).get(name)
        value = None if value is None else value.strip()
        return value or None

    def text(self, name: str, default: str = "") -> str:
        return self.raw(name) or default

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        value = (self.raw(name) or default).lower()
        if value not in choices:
            raise self.error(f"{name}={value!r}: must be one of {', '.join(choices)}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        raw = (os.environ if self.environ is None else self.environ).get(name)
        if raw is None:
            return default
        value = raw.strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise self.error(f"{name}={raw!r}: must be one of 1/0, true/false, yes/no, on/off")

    def integer(self, name: str, default: int, *, minimum: int | None = None) -> int:
        raw = self.raw(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise self.error(f"{name}={raw!r}: must be an integer") from None
        if minimum is not None and value < minimum:
            raise self.error(f"{name}={raw!r}: must be >= {minimum}")
        return value

    def number(self, name: str, default: float, *, minimum: float | None = None) -> float:
        raw = self.raw(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise self.error(f"{name}={raw!r}: must be a number") from None
        if minimum is not None and value < minimum:
            raise self.error(f"{name}={raw!r}: must be >= {minimum}")
        return value

    def items(self, name: str, default: list[str]) -> list[str]:
        """A comma-separated list; blanks are dropped. Set but blank: the empty list."""
        raw = (os.environ if self.environ is None else self.environ).get(name)
        if raw is None:
            return default
        return [item.strip() for item in raw.split(",") if item.strip()]

    def secret(self, name: str, default: str | None = None) -> str | None:
        """NAME, or the contents of the file named by NAME_FILE (docker/k8s secrets); setting
        both is refused (which one was meant?)."""
        value, path = self.raw(name), self.raw(f"{name}_FILE")
        if value is not None and path is not None:
            raise self.error(f"{name} and {name}_FILE are both set: keep one")
        if path is None:
            return value if value is not None else default
        try:
            return Path(path).read_text().strip()
        except OSError as exc:
            raise self.error(f"{name}_FILE={path!r}: cannot read it ({exc.strerror})") from None
