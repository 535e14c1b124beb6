"""A body over the server's request limit gets a 413 that says so (JSON under /api/), never
the web framework's bare HTML 400 page."""

from __future__ import annotations

from django.test import Client, override_settings

from tests.leaderboard.lbkit import submit


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=2**20)
def test_an_oversized_body_is_refused_with_the_limit(clients, local_storage):
    r = submit(clients["owner"], source="x" * (2 * 2**20))
    assert r.status_code == 413 and r["Content-Type"] == "application/json"
    assert "over this server's limit of 1.0 MiB (FARM_MAX_REQUEST_BYTES)" in r.json()["detail"]
    page = Client().post("/submit/", {"source": "x" * (2 * 2**20)})
    assert page.status_code == 413 and "FARM_MAX_REQUEST_BYTES" in page.content.decode()
    assert submit(clients["owner"]).status_code == 201
