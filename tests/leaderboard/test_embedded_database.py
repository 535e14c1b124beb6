"""The hot reads run SQL of their own (token lookup, board stamp, status read): on the embedded
SQLite database, the default without DATABASE_URL, they must give what the ORM gives there too.
Runs in a child process, since the other tests hold the PostgreSQL connection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.leaderboard.lbkit import HW, SUITE, VECTOR_ADD

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = f"""
import json
import django

django.setup()
from django.core.management import call_command
from django.test.utils import setup_test_environment

call_command("migrate", verbosity=0)
setup_test_environment()

from django.contrib.auth.models import User
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient, APIRequestFactory

from farm.suite.loader import load_suite
from leaderboard.accounts.services import api_token_create
from leaderboard.boards.services import board_get_or_create, board_update
from leaderboard.problems.models import Problem
from leaderboard.problems.services import hardware_sync, suite_sync
from leaderboard.runs.models import Run
from leaderboard.submissions.apis import SubmissionOutput
from leaderboard.submissions.models import Submission

suite_sync(farm_suite=load_suite({SUITE!r}), hardware=hardware_sync())
user = User.objects.create_user("owner")
client = APIClient()
client.credentials(HTTP_AUTHORIZATION="Bearer " + api_token_create(user=user)[1])
body = {{"problem": "vector_add", "suite": {SUITE!r}, "hardware": [{HW!r}],
         "source": {VECTOR_ADD!r}, "mode": "leaderboard"}}
created = client.post("/api/submissions/", body, format="json")
sub = Submission.objects.get(pk=created.json()["id"])
Run.objects.filter(submission=sub).update(state="done", sol_score=0.5, finished_at=sub.created_at)
status = client.get(f"/api/submissions/{{sub.pk}}/")
request = APIRequestFactory().get("/")
request.user = user
expected = SubmissionOutput(sub, context={{"request": request}}).data
expected = json.loads(JSONRenderer().render(expected))
problem = Problem.objects.get(suite_id={SUITE!r}, name="vector_add")
board = board_get_or_create(problem_id=problem.pk, hardware_id={HW!r})
board_update(board=board, sources_public=True)
board = APIClient().get("/api/boards/{SUITE}/vector_add/{HW}/")
print(json.dumps({{
    "created": created.status_code,
    "status": [status.status_code, status.json()],
    "expected": expected,
    "tokens": client.get("/api/tokens/").status_code,
    "board": [board.status_code, board.json()],
}}))
"""


def test_hot_reads_on_sqlite(tmp_path):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "leaderboard.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'farm.sqlite3'}",
        "FARM_VAR_DIR": str(tmp_path),
        "CELERY_BROKER_URL": "memory://",
        "FARM_S3_BUCKET": "",
        "DJANGO_ALLOWED_HOSTS": "testserver",
        "FARM_LOG_LEVEL": "ERROR",
    }
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["created"] == 201 and got["tokens"] == 200
    code, status = got["status"]
    assert code == 200 and status == got["expected"]
    assert status["created_at"].endswith("Z") and status["private"] is True
    assert status["runs"][0]["finished_at"].endswith("Z") and status["state"] == "done"
    code, board = got["board"]
    assert code == 200 and board["sources_public"] is True and board["entries"] == []
