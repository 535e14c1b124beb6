"""/api/docs/ (Swagger UI) and /api/redoc/ load their scripts from this server's static files,
so they render on a farm without internet access."""

from __future__ import annotations

import re

import pytest
from django.test import Client


@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_api_docs_use_only_local_assets(db, path):
    page = Client().get(path).content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources and all(s.startswith("/") for s in sources), sources
    for src in sources:
        if src.endswith((".js", ".css")):
            assert Client().get(src).status_code == 200, src


def test_schema_generates_without_warnings(db, tmp_path):
    from django.core.management import call_command

    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(tmp_path / "s.yaml"))
    assert "warnings:" in (tmp_path / "s.yaml").read_text()  # the create answer's warnings
