""".env.example documents the server's real defaults: every `NAME=value` it shows for a setting
of the same name equals what the server uses when NAME is unset (a setting that is off by
default, such as FARM_S3_BUCKET, is shown with an example value instead)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from django.conf import settings

ENV_EXAMPLE = Path(__file__).resolve().parents[2] / ".env.example"
PAIR = re.compile(r"\b([A-Z][A-Z0-9_]+)=(\S*)")


def documented_server_defaults() -> dict[str, str]:
    text = ENV_EXAMPLE.read_text()
    server = text[text.index("--- server") : text.index("--- clients")]
    pairs: dict[str, str] = {}
    for line in server.splitlines():
        body = line.lstrip("# ").split("  #", 1)[0]  # the values, not the trailing comment
        pairs.update({name: value for name, value in PAIR.findall(body) if value})
    return pairs


def _same(documented: str, actual: object) -> bool:
    if isinstance(actual, bool):
        return documented == ("1" if actual else "0")
    if isinstance(actual, int | float):
        return float(documented) == float(actual)
    return documented == str(actual)


def test_env_example_shows_the_real_defaults():
    checked = {
        name: value
        for name, value in documented_server_defaults().items()
        if getattr(settings, name, None) not in (None, "") and name not in os.environ
    }
    assert {"FARM_MAX_SOURCE_BYTES", "FARM_MAX_BATCH", "FARM_QUOTA_RUNS_PER_HOUR"} <= set(checked)
    wrong = {
        n: (v, getattr(settings, n))
        for n, v in checked.items()
        if not _same(v, getattr(settings, n))
    }
    assert not wrong, f".env.example value vs the server's default: {wrong}"
