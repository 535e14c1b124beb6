"""The API fuzzed from its own OpenAPI schema (schemathesis + hypothesis): no request gets a
5xx, every answer has a status and a body the schema declares, and requests from callers without
permission change no data."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    response_schema_conformance,
    status_code_conformance,
)

from leaderboard.boards.models import Board  # noqa: E402
from leaderboard.nodes.models import Node  # noqa: E402
from leaderboard.runs.models import Result, Run  # noqa: E402
from leaderboard.submissions.models import Submission  # noqa: E402
from tests.leaderboard.lbkit import HW, SUITE, VECTOR_ADD, make_node, user_client  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@contextmanager
def in_test_transaction():
    """Requests run inside this test's transaction: switch off the per-request connection
    cleanup around them, as Django's own test client does."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(db):
    """The schema, served by the WSGI app in this process."""
    from leaderboard.wsgi import application

    with in_test_transaction():
        return schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)


def call(case, headers):  # type: ignore[no-untyped-def]
    with in_test_transaction():
        response = case.call(headers=headers)
    case.validate_response(
        response,
        checks=[not_a_server_error, status_code_conformance, response_schema_conformance],
    )
    return response


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture
def fuzz_world(users, local_storage):
    """An owner with a submission whose run is held by a node; tokens for every caller."""
    owner = user_client(users["owner"])
    holder = make_node("holder", [HW])
    intruder = make_node("intruder", [HW])
    body = owner.post(
        "/api/submissions/",
        {"problem": "vector_add", "suite": SUITE, "hardware": [HW], "source": VECTOR_ADD},
        format="json",
    ).json()
    holder.post(f"/api/agent/runs/{body['runs'][0]['id']}/claim/")
    return {"owner": owner.token, "intruder": intruder.token, "run": body["runs"][0]["id"]}


def snapshot(run_id: int) -> tuple:
    run = Run.objects.get(pk=run_id)
    return (
        Submission.objects.count(),
        Run.objects.count(),
        Result.objects.count(),
        Node.objects.count(),
        Board.objects.filter(sources_public=True).count(),
        Submission.objects.filter(hacked=True).count(),
        run.state,
        run.node_id,
        run.attempt,
    )


# 25 cases per operation and identity
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


@schema.parametrize()
@SETTINGS
def test_no_server_errors_as_a_user(case, fuzz_world):
    call(case, {"Authorization": f"Bearer {fuzz_world['owner']}"})


@schema.parametrize()
@SETTINGS
def test_anonymous_and_foreign_node_change_nothing(case, fuzz_world):
    for headers in ({}, {"Authorization": f"Bearer {fuzz_world['intruder']}"}):
        before = snapshot(fuzz_world["run"])
        call(case, headers)
        after = snapshot(fuzz_world["run"])
        if case.path.startswith("/api/agent/heartbeat") or case.path.startswith(
            "/api/agent/register"
        ):
            continue  # a node updating its own record is allowed
        assert after == before, (
            f"{case.method} {case.path} as {headers or 'anonymous'} changed data"
        )
