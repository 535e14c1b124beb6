"""Shared pieces of the remote commands: server options, header directives, tables."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from farm.errors import FarmError

DIRECTIVE = re.compile(r"^#!farm\s+(.*)$")
DIRECTIVE_KEYS = {"problem": "problem", "hw": "hw", "hardware": "hw", "mode": "mode"}
DIRECTIVE_KEYS |= {"suite": "suite", "label": "label"}
HEADER_LINES = 40


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="server URL (default: FARM_URL, then the config file)")
    parser.add_argument("--token", help="API token (default: FARM_TOKEN, then the config file)")
    parser.add_argument(
        "--profile",
        help="config profile, e.g. `local` for the farm `farm up` runs (default: FARM_PROFILE)",
    )


def make_client(args: argparse.Namespace):
    from farm.client import FarmClient

    return FarmClient(
        getattr(args, "url", None),
        getattr(args, "token", None),
        profile=getattr(args, "profile", None),
    )


def header_directives(source: str, *, filename: str = "the file") -> dict[str, str]:
    """`#!farm key=value ...` lines near the top of a source, as {problem, hw, mode, suite,
    label}. Raises FarmError (exit 2) naming an unknown key or a malformed pair."""
    found: dict[str, str] = {}
    for lineno, line in enumerate(source.splitlines()[:HEADER_LINES], start=1):
        match = DIRECTIVE.match(line.strip())
        if not match:
            continue
        for pair in match.group(1).split():
            key, sep, value = pair.partition("=")
            if not sep or not value:
                raise FarmError(
                    f"{filename}:{lineno}: `{pair}` in a #!farm line is not key=value",
                    hint="write e.g. `#!farm problem=softmax hw=npu-sim-v1 mode=benchmark`",
                )
            if key not in DIRECTIVE_KEYS:
                raise FarmError(
                    f"{filename}:{lineno}: unknown #!farm key '{key}'",
                    hint=f"known keys: {', '.join(sorted(DIRECTIVE_KEYS))}",
                )
            found[DIRECTIVE_KEYS[key]] = value
    return found


def split_list(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def write_json(path: str, data: Any) -> None:
    text = json.dumps(data, indent=2, default=str) + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        Path(path).write_text(text)


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 1:
        return f"{value * 1000:.2f} us"
    return f"{value:.3f} ms"


def fmt_score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr)
