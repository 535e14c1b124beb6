"""The status read (GET /api/submissions/<id>/) is built from plain rows, not from
SubmissionOutput: it must give the same JSON as the serializer (which the OpenAPI schema
describes) for every run state, viewer and source visibility, in three queries."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import AnonymousUser
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIRequestFactory

from leaderboard.runs.models import Run
from leaderboard.submissions.apis import SubmissionOutput
from leaderboard.submissions.selectors import submissions_visible
from tests.leaderboard.lbkit import AMD, GPU, HW, SUITE, submit

VIEWERS = ("owner", "other", "admin", "anonymous")


def serializer_json(user, submission_id: int) -> dict | None:
    """What SubmissionOutput renders for `user`, through the API's JSON renderer."""
    submission = submissions_visible(user=user).filter(pk=submission_id).first()
    if submission is None:
        return None
    request = APIRequestFactory().get(f"/api/submissions/{submission_id}/")
    request.user = user
    data = SubmissionOutput(submission, context={"request": request}).data
    return json.loads(JSONRenderer().render(data))


def api_json(client, submission_id: int) -> dict | None:
    r = client.get(f"/api/submissions/{submission_id}/")
    if r.status_code == 404:
        assert "does not exist or is not visible to you" in r.json()["detail"]
        return None
    assert r.status_code == 200, r.content
    return r.json()


@pytest.fixture
def mixed(clients, local_storage):
    """A private and a public submission whose runs are in every kind of state, one with an
    audit run (not listed)."""
    private = submit(clients["owner"], hardware=[HW, GPU, AMD]).json()["id"]
    public = submit(clients["owner"], hardware=[HW, GPU], private=False).json()["id"]
    finished = datetime(2026, 11, 22, 6, 30, 15, 123456, tzinfo=UTC)
    runs = {r.hardware_id: r for r in Run.objects.filter(submission_id=private)}
    Run.objects.filter(pk=runs[HW].pk).update(
        state="done", attempt=1, verdict="PASSED", sol_score=0.375, finished_at=finished
    )
    Run.objects.filter(pk=runs[GPU].pk).update(
        state="failed", attempt=3, failure_code="TIMEOUT", failure_detail="over 900 s"
    )
    Run.objects.filter(pk=runs[AMD].pk).update(state="running", attempt=1)
    done = Run.objects.get(pk=runs[HW].pk)
    Run.objects.filter(pk=done.pk).update(audit="confirmed", audit_detail="agreed")
    Run.objects.create(
        submission_id=private,
        user_id=done.user_id,
        problem_id=done.problem_id,
        hardware_id=HW,
        mode=done.mode,
        audit_of=done,
    )
    return {"private": private, "public": public}


@pytest.mark.parametrize("viewer", VIEWERS)
def test_status_read_gives_the_serializer_json(viewer, clients, users, mixed):
    user = users.get(viewer) or AnonymousUser()
    for submission_id in mixed.values():
        got = api_json(clients[viewer], submission_id)
        expected = serializer_json(user, submission_id)
        assert got == expected
        if got is not None:
            assert list(got) == list(expected)  # same key order too
            assert [list(r) for r in got["runs"]] == [list(r) for r in expected["runs"]]


def test_status_lists_runs_by_hardware_without_the_audit_run(clients, mixed):
    body = api_json(clients["owner"], mixed["private"])
    assert [r["hardware"] for r in body["runs"]] == sorted([HW, GPU, AMD])
    assert body["state"] == "running"
    done = next(r for r in body["runs"] if r["hardware"] == HW)
    assert (done["state"], done["sol_score"], done["audit"]) == ("done", 0.375, "confirmed")
    assert done["finished_at"] == "2026-11-22T06:30:15.123456Z"
    assert body["source_url"].endswith(f"/api/submissions/{mixed['private']}/source/")


def test_source_url_follows_the_board(clients, users, mixed):
    from leaderboard.boards.services import board_get_or_create, board_update
    from leaderboard.problems.models import Problem

    public = mixed["public"]
    assert api_json(clients["other"], public)["source_url"] is None
    problem = Problem.objects.get(suite_id=SUITE, name="vector_add")
    board = board_get_or_create(problem_id=problem.pk, hardware_id=GPU)
    board_update(board=board, sources_public=True)
    for viewer in ("other", "anonymous"):
        got = api_json(clients[viewer], public)
        assert got["source_url"] == f"http://testserver/api/submissions/{public}/source/"
        assert got == serializer_json(users.get(viewer) or AnonymousUser(), public)


def test_status_read_takes_three_queries(clients, mixed, django_assert_num_queries):
    owner, other = clients["owner"], clients["other"]
    for client in (owner, other):  # a token's last use is recorded at most once a minute
        api_json(client, mixed["public"])
    with django_assert_num_queries(3):  # token, submission, runs
        api_json(owner, mixed["private"])
    with django_assert_num_queries(2):  # hidden: no runs read
        assert api_json(other, mixed["private"]) is None
