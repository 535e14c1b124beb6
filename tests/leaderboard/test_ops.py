"""Settings from the environment, metrics, health (sync_suites: tests/leaderboard/problems/)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from leaderboard import env
from tests.leaderboard.lbkit import HW, finish, make_node, submit

ROOT = Path(__file__).resolve().parents[2]


def test_env_helpers_name_the_bad_key(monkeypatch, tmp_path):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG='maybe'"):
        env.env_bool("X_FLAG", False)
    monkeypatch.setenv("X_NUM", "12a")
    with pytest.raises(ImproperlyConfigured, match="X_NUM='12a': must be an integer"):
        env.env_int("X_NUM", 1)
    secret = tmp_path / "secret"
    secret.write_text("from-file\n")
    monkeypatch.setenv("X_SECRET_FILE", str(secret))
    assert env.env_secret("X_SECRET") == "from-file"
    monkeypatch.setenv("X_LIST", "a, b,,c")
    assert env.env_list("X_LIST", []) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("DJANGO_DEBUG", "perhaps", "DJANGO_DEBUG='perhaps'"),
        ("FARM_MAX_SOURCE_BYTES", "lots", "FARM_MAX_SOURCE_BYTES='lots': must be an integer"),
        ("DATABASE_URL", "nosuchdb://x", "DATABASE_URL"),
        ("DJANGO_SECRET_KEY_FILE", "/nonexistent/key", "DJANGO_SECRET_KEY_FILE"),
    ],
)
def test_server_stops_at_start_up_naming_the_key(key, value, message, tmp_path):
    environ = {**os.environ, key: value, "FARM_VAR_DIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert message in proc.stderr


def test_metrics(clients, local_storage, django_capture_on_commit_callbacks):
    node = make_node("m", [HW])
    with django_capture_on_commit_callbacks(execute=True):
        body = submit(clients["owner"]).json()
        submit(clients["owner"], mode="benchmark")
        from leaderboard.runs.models import Run

        finish(node, Run.objects.get(pk=body["runs"][0]["id"]))
    text = clients["anonymous"].get("/metrics").content.decode()
    assert f'farm_runs{{hardware="{HW}",state="done"}} 1.0' in text
    assert f'farm_queue_depth{{hardware="{HW}"}} 1.0' in text
    assert 'farm_runs_by_verdict{verdict="PASSED"} 1.0' in text
    assert "farm_evaluation_latency_seconds_bucket" in text
    assert "farm_submissions 2.0" in text
    assert "django_http_requests_total_by_method_total" in text


def test_health(client, db):
    from leaderboard.nodes import reception
    from leaderboard.nodes.models import Reception

    reception._noted = float("-inf")
    assert client.get("/health/").json() == {"status": "ok"}
    assert Reception.objects.get().last is not None  # a probe counts as the server hearing
