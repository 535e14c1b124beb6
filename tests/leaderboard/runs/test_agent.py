"""The node-facing contract of a run: claims (exactly one node wins), who may still report (the
holder, within its lease), failures and node faults, runs by category. A node's own part:
tests/leaderboard/nodes/; judging the result: tests/leaderboard/judging/test_results.py."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
import requests
from django.utils import timezone

from farm.node_api import Job
from leaderboard.nodes.models import Node
from leaderboard.runs.models import Result, Run
from leaderboard.runs.services import RunConflict, run_claim, runs_reap
from tests.leaderboard.lbkit import (
    AMD,
    HW,
    SUITE,
    VECTOR_ADD,
    finish,
    queued_run,
    race,
    result_doc,
    server_hearing_since,
)


def test_claim_gives_the_job_and_exactly_one_node_wins(clients, node, other_node, local_storage):
    run = queued_run(clients)
    r = node.post(f"/api/agent/runs/{run.pk}/claim/")
    assert r.status_code == 200, r.content
    job = r.json()
    assert job["run"] == run.pk and job["attempt"] == 1
    assert job["source"] == VECTOR_ADD and job["problem"] == "vector_add"
    assert job["suite"]["name"] == SUITE and len(job["suite"]["hash"]) == 64
    assert job["time_limits"]["soft_s"] < job["time_limits"]["hard_s"]
    assert Job.from_json(job).to_json() == job
    again = node.post(f"/api/agent/runs/{run.pk}/claim/")
    assert again.status_code == 200 and again.json()["attempt"] == 1
    lost = other_node.post(f"/api/agent/runs/{run.pk}/claim/")
    assert lost.status_code == 409
    run.refresh_from_db()
    assert (run.state, run.node_id, run.attempt) == ("claimed", node.node.pk, 1)


def test_node_cannot_claim_other_hardware(clients, node, local_storage):
    run = queued_run(clients, hardware=[AMD])
    r = node.post(f"/api/agent/runs/{run.pk}/claim/")
    assert r.status_code == 403
    assert "is for amd-mi300x" in r.json()["detail"]


def test_draining_and_disabled_nodes(clients, node, local_storage):
    run = queued_run(clients)
    Node.objects.filter(pk=node.node.pk).update(draining=True)
    assert node.post(f"/api/agent/runs/{run.pk}/claim/").status_code == 409
    Node.objects.filter(pk=node.node.pk).update(draining=False, enabled=False)
    assert node.post(f"/api/agent/runs/{run.pk}/claim/").status_code == 403


def test_only_the_holder_reports(clients, node, other_node, local_storage):
    run = queued_run(clients)
    attempt = node.post(f"/api/agent/runs/{run.pk}/claim/").json()["attempt"]
    body = {"attempt": attempt, "result": result_doc(run)}
    r = other_node.post(f"/api/agent/runs/{run.pk}/result/", body, format="json")
    assert r.status_code == 403 and "not held by this node" in r.json()["detail"]
    assert (
        other_node.post(
            f"/api/agent/runs/{run.pk}/start/", {"attempt": attempt}, format="json"
        ).status_code
        == 403
    )
    stale = node.post(
        f"/api/agent/runs/{run.pk}/result/", {**body, "attempt": attempt + 1}, format="json"
    )
    assert stale.status_code == 409
    assert not Result.objects.filter(run=run).exists()


def presume_dead(node, run) -> None:
    """The node's heartbeats and the run's claim are an hour old; the server heard all along."""
    long_ago = timezone.now() - timedelta(hours=1)
    Node.objects.filter(pk=node.node.pk).update(last_heartbeat=long_ago)
    Run.objects.filter(pk=run.pk).update(claimed_at=long_ago)
    server_hearing_since(long_ago)


def test_a_late_result_after_the_lease_expired_is_refused_and_the_run_goes_elsewhere(
    clients, node, other_node, local_storage
):
    """A node silent for a whole dead-node window while the server was receiving (frozen,
    cut off) lost its lease: what it measured then is refused, even while no other node has
    claimed the run, and the run is measured again elsewhere without charging an attempt."""
    run = queued_run(clients)
    node.post(f"/api/agent/runs/{run.pk}/claim/")
    node.post(f"/api/agent/runs/{run.pk}/start/", {"attempt": 1}, format="json")
    presume_dead(node, run)
    assert runs_reap() == 1
    run.refresh_from_db()
    assert (run.state, run.node_id, run.failure_code) == ("queued", None, "LOST")
    assert (run.node_faults, run.charged_attempts, run.fault_nodes) == (1, 0, [node.node.pk])
    late = {"attempt": 1, "result": result_doc(run)}
    foreign = other_node.post(f"/api/agent/runs/{run.pk}/result/", late, format="json")
    assert foreign.status_code == 403
    r = node.post(f"/api/agent/runs/{run.pk}/result/", late, format="json")
    assert r.status_code == 409 and "lease on attempt 1 expired" in r.json()["detail"]
    up = node.post(f"/api/agent/runs/{run.pk}/artifacts/", {"attempt": 1, "name": "logs"})
    assert up.status_code == 409
    hb = node.post("/api/agent/heartbeat/", {"current_runs": [run.pk]}, format="json").json()
    assert hb["abandon"] == [run.pk]  # the frozen node stops it; nothing is given back
    run.refresh_from_db()
    assert (run.state, Result.objects.filter(run=run).exists()) == ("queued", False)
    ok = finish(other_node, run, time_ms=2.0)
    assert ok.status_code == 200 and ok.json()["state"] == "done" and ok.json()["attempt"] == 2
    run.refresh_from_db()
    assert (run.verdict, run.category, run.charged_attempts) == ("PASSED", "kernel", 1)


def test_late_result_after_another_node_claimed_is_refused(
    clients, node, other_node, local_storage
):
    run = queued_run(clients)
    node.post(f"/api/agent/runs/{run.pk}/claim/")
    presume_dead(node, run)
    assert runs_reap() == 1
    late = {"attempt": 1, "result": result_doc(run)}
    ok = finish(other_node, run)
    assert ok.status_code == 200 and ok.json()["attempt"] == 2
    assert node.post(f"/api/agent/runs/{run.pk}/result/", late, format="json").status_code == 403
    assert Result.objects.filter(run=run).count() == 1
    assert Result.objects.get(run=run).node_id == other_node.node.pk
    hb = node.post("/api/agent/heartbeat/", {"current_runs": [run.pk]}, format="json").json()
    assert hb["abandon"] == [run.pk]


def test_no_node_is_presumed_dead_after_an_outage_of_the_server(clients, node, local_storage):
    from leaderboard.nodes.reception import reception_note

    run = queued_run(clients)
    node.post(f"/api/agent/runs/{run.pk}/claim/")
    presume_dead(node, run)
    now = timezone.now()
    reception_note(now=now - timedelta(minutes=10))
    reception_note(now=now - timedelta(seconds=5))  # a pause of ~10 min: the server was down
    assert runs_reap() == 0
    for s in range(0, 181, 30):  # then a full window of hearing since the outage
        reception_note(now=now + timedelta(seconds=s))
    with mock.patch("django.utils.timezone.now", return_value=now + timedelta(minutes=3)):
        assert runs_reap() == 1
    run.refresh_from_db()
    assert (run.state, run.attempt_node_id) == ("queued", node.node.pk)


def test_lost_runs_are_not_charged_and_end_after_max_node_faults(
    clients, node, local_storage, settings
):
    settings.FARM_MAX_ATTEMPTS = 1
    settings.FARM_MAX_NODE_FAULTS = 2
    run = queued_run(clients)
    for expected in ("queued", "failed"):
        node.post(f"/api/agent/runs/{run.pk}/claim/")
        presume_dead(node, run)
        runs_reap()
        run.refresh_from_db()
        assert run.state == expected
        Node.objects.filter(pk=node.node.pk).update(last_heartbeat=timezone.now())
    assert (run.attempt, run.charged_attempts, run.category) == (2, 0, "farm")
    assert "gave up after 2 faults of the nodes" in run.failure_detail


def test_failure_reports(clients, node, other_node, local_storage):
    """A retryable failure is the node's fault: not charged, and retried on another node while
    one is online; a permanent one fails the run, as the farm's outcome."""
    run = queued_run(clients)
    node.post(f"/api/agent/runs/{run.pk}/claim/")
    failure = {
        "attempt": 1,
        "failure": {"code": "SANDBOX_CRASH", "detail": "oom", "retryable": True},
    }
    r = node.post(f"/api/agent/runs/{run.pk}/result/", failure, format="json")
    assert r.status_code == 200 and r.json()["state"] == "queued"
    again = node.post(f"/api/agent/runs/{run.pk}/result/", failure, format="json")
    assert again.json()["duplicate"] is True
    run.refresh_from_db()
    assert (run.node_faults, run.charged_attempts, run.fault_nodes) == (1, 0, [node.node.pk])
    refused = node.post(f"/api/agent/runs/{run.pk}/claim/")
    assert refused.status_code == 409 and "faulted on this node" in refused.json()["detail"]
    assert other_node.post(f"/api/agent/runs/{run.pk}/claim/").json()["attempt"] == 2
    final = {
        "attempt": 2,
        "failure": {"code": "BAD_SOURCE", "detail": "no kernel()", "retryable": False},
    }
    r = other_node.post(f"/api/agent/runs/{run.pk}/result/", final, format="json")
    assert r.json()["state"] == "failed"
    run.refresh_from_db()
    assert (run.category, run.charged_attempts) == ("farm", 1)
    r = node.post(f"/api/agent/runs/{run.pk}/result/", final, format="json")
    assert r.status_code == 403 and "never held by this node" in r.json()["detail"]
    both = {"attempt": 2, "failure": final["failure"], "result": result_doc(run)}
    assert (
        other_node.post(f"/api/agent/runs/{run.pk}/result/", both, format="json").status_code == 400
    )


def test_a_single_node_may_retry_its_own_fault(clients, node, local_storage):
    run = queued_run(clients)
    node.post(f"/api/agent/runs/{run.pk}/claim/")
    failure = {"attempt": 1, "failure": {"code": "HARNESS_FAILED", "detail": "x", "retryable": 1}}
    assert node.post(f"/api/agent/runs/{run.pk}/result/", failure, format="json").status_code == 200
    assert node.post(f"/api/agent/runs/{run.pk}/claim/").json()["attempt"] == 2


def test_runs_are_listed_by_category(clients, node, local_storage, settings):
    """`category` is derived from the state and the verdict; the runs list filters by it."""
    settings.FARM_MAX_NODE_FAULTS = 1  # an INCONCLUSIVE is kept at once
    farm, kernel, waiting = (queued_run(clients) for _ in range(3))
    finish(node, farm, verdict="INCONCLUSIVE")
    finish(node, kernel, verdict="INCORRECT")
    owner = clients["owner"]
    for category, expected in (("farm", farm), ("kernel", kernel), ("", waiting)):
        listed = owner.get(f"/api/runs/?category={category}").json()["results"]
        assert [r["id"] for r in listed] == [expected.pk], category
        assert listed[0]["category"] == category
    assert owner.get("/api/runs/?category=other").json()["results"] == []


@pytest.mark.django_db(transaction=True)
def test_claim_race_threads_exactly_one_wins(local_storage, django_db_setup):
    from django.contrib.auth.models import User

    from leaderboard.nodes.services import node_create
    from leaderboard.submissions.services import submissions_create
    from leaderboard.submissions.validation import submission_check

    user = User.objects.create_user("racer")
    nodes = [node_create(name=f"racer-{i}", hardware=[HW])[0] for i in range(6)]
    req = submission_check(problem="vector_add", hardware=[HW], source=VECTOR_ADD, suite=SUITE)
    subs = submissions_create(user=user, requests=[req] * 10)
    for submission in subs:
        run_id = submission.runs.get().pk
        winners = race(
            lambda n, run_id=run_id: run_claim(run_id=run_id, node=n), nodes, lost=RunConflict
        )
        run = Run.objects.get(pk=run_id)
        assert len(winners) == 1, winners
        assert run.node_id == winners[0].pk and run.attempt == 1


@pytest.mark.django_db(transaction=True)
def test_claim_race_over_http_exactly_one_wins(live_server, local_storage, django_db_setup):
    from django.contrib.auth.models import User

    from leaderboard.nodes.services import node_create
    from leaderboard.submissions.services import submissions_create
    from leaderboard.submissions.validation import submission_check

    tokens = [node_create(name=f"http-{i}", hardware=[HW])[1] for i in range(4)]
    req = submission_check(problem="vector_add", hardware=[HW], source=VECTOR_ADD, suite=SUITE)
    user = User.objects.create_user("http-racer")
    for submission in submissions_create(user=user, requests=[req] * 5):
        url = f"{live_server.url}/api/agent/runs/{submission.runs.get().pk}/claim/"
        codes: list[int] = []

        def post(token: str, url: str = url, codes: list[int] = codes) -> None:
            r = requests.post(url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
            codes.append(r.status_code)
            if r.status_code == 409:
                raise RunConflict("lost")

        winners = race(post, tokens, lost=RunConflict)
        assert sorted(codes) == [200, 409, 409, 409] and len(winners) == 1
