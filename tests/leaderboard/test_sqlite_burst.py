"""The local farm's embedded SQLite database takes a burst of concurrent submissions: writers
are serialised (WAL, immediate transactions, a busy timeout), none answers 5xx, none is lost.
The web tier runs as `farm up` runs it (gunicorn, two worker processes) in child processes."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def test_fifty_concurrent_submissions_on_sqlite(tmp_path):
    from bench.faults import sqlite_burst

    row = sqlite_burst(tmp_path / "farm", count=50)
    assert row["5xx"] == 0, row["notes"]
    assert (row["done"], row["lost"], row["duplicated"]) == (50, 0, 0), row["notes"]


def test_a_database_that_stays_locked_is_a_503_that_clients_repeat():
    from django.db import OperationalError

    from leaderboard.api_errors import handle

    response = handle(OperationalError("database is locked"), {})
    assert response is not None and response.status_code == 503
    assert response["Retry-After"] == "1" and "nothing was stored" in response.data["detail"]
    assert handle(OperationalError("no such table: x"), {}) is None
