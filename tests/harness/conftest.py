"""Shared helpers for the harness tests: solution headers and a cached evaluation."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
HEADER = re.compile(r"^# (\w+): (.+)$")


def header(path: Path) -> dict[str, str]:
    """The `# key: value` lines at the top of a solution or hack file."""
    fields = {}
    for line in path.read_text().splitlines():
        m = HEADER.match(line)
        if not m:
            break
        fields[m.group(1)] = m.group(2).strip()
    return fields


def solution_files(kind: str) -> list[Path]:
    return sorted((SOLUTIONS / kind).glob("*.py"))


@cache
def evaluated(path: str, device: str, mode: str) -> dict[str, Any]:
    """Evaluate a file once per test session (several tests read the same document)."""
    from farm.harness.supervisor import evaluate

    return evaluate(path, problem=header(Path(path))["problem"], device=device, mode=mode).to_json()


@pytest.fixture(scope="session")
def sandbox_ready() -> None:
    """The harness tests use the configured sandbox (bwrap here); fail clearly without one."""
    from farm.sandbox import get_runner

    get_runner("auto")
