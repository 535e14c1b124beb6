"""The node-facing contract: register, heartbeat, claim, start, result, failures, artifacts."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
import requests
from django.utils import timezone

from farm.node_api import Job
from leaderboard.artifacts.models import Artifact
from leaderboard.boards.models import BoardEntry
from leaderboard.nodes.models import Node
from leaderboard.runs.models import Result, Run
from leaderboard.runs.services import RunConflict, run_claim, runs_reap
from tests.leaderboard.lbkit import (
    AMD,
    GPU,
    HW,
    SUITE,
    VECTOR_ADD,
    finish,
    race,
    result_doc,
    server_hearing_since,
    submit,
)


def queued_run(clients, **fields) -> Run:
    body = submit(clients["owner"], **fields).json()
    return Run.objects.get(pk=body["runs"][0]["id"])


def test_register_and_heartbeat(node):
    r = node.post(
        "/api/agent/register/",
        {
            "hardware": [HW],
            "devices": [{"index": 0, "name": "npu-sim"}],
            "agent_version": "1.0",
            "hostname": "box",
        },
        format="json",
    )
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["queues"] == [f"hw.{HW}", f"hw.{HW}.node-{body['node']['id']}"]
    assert body["node"]["status"] == "online"
    assert body["heartbeat_interval_s"] >= 1
    r = node.post("/api/agent/register/", {"hardware": ["npu-sim-v2"]}, format="json")
    assert r.status_code == 400 and "unknown hardware class 'npu-sim-v2'" in r.json()["detail"]
    wider = node.post("/api/agent/register/", {"hardware": [HW, AMD]}, format="json")
    assert (
        wider.status_code == 403 and "an operator must allow amd-mi300x" in wider.json()["detail"]
    )
    assert sorted(h.name for h in node.node.hardware.all()) == [HW]
    hb = node.post("/api/agent/heartbeat/", {"current_runs": [12345]}, format="json")
    assert hb.status_code == 200
    assert hb.json()["abandon"] == [12345] and hb.json()["drain"] is False


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


def test_result_is_idempotent(clients, node, local_storage):
    run = queued_run(clients)
    first = finish(node, run)
    assert first.status_code == 200, first.content
    assert first.json()["duplicate"] is False and first.json()["state"] == "done"
    body = {"attempt": 1, "result": result_doc(run)}
    again = node.post(f"/api/agent/runs/{run.pk}/result/", body, format="json")
    assert again.status_code == 200 and again.json()["duplicate"] is True
    changed = {"attempt": 1, "result": result_doc(run, time_ms=4.0)}
    conflict = node.post(f"/api/agent/runs/{run.pk}/result/", changed, format="json")
    assert conflict.status_code == 409
    assert Result.objects.filter(run=run).count() == 1
    assert Result.objects.get(run=run).document["workloads"][0]["time_ms"] == 5.0


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


def test_farm_outcomes_are_measured_again_uncharged_and_never_a_board_entry(
    clients, node, other_node, local_storage, settings
):
    """INCONCLUSIVE: again, anywhere; NODE_FAULT: again, on another node; neither is charged
    nor stored while faults remain. UNSUPPORTED is final and stated. None is about the kernel."""
    settings.FARM_MAX_NODE_FAULTS = 3
    run = queued_run(clients, mode="leaderboard")
    r = finish(node, run, verdict="INCONCLUSIVE")
    assert r.status_code == 200 and r.json()["state"] == "queued", r.content
    run.refresh_from_db()
    assert (run.failure_code, run.node_faults, run.fault_nodes) == ("INCONCLUSIVE", 1, [])
    assert "measured again, not charged" in run.failure_detail
    r = finish(node, run, verdict="NODE_FAULT")
    assert r.json()["state"] == "queued"
    run.refresh_from_db()
    assert (run.node_faults, run.fault_nodes) == (2, [node.node.pk])
    assert node.post(f"/api/agent/runs/{run.pk}/claim/").status_code == 409
    r = finish(other_node, run, verdict="INCONCLUSIVE")  # the last fault allowed: kept, final
    assert r.json()["state"] == "done" and r.json()["verdict"] == "INCONCLUSIVE"
    run.refresh_from_db()
    assert (run.category, run.charged_attempts, run.sol_score) == ("farm", 0, None)
    assert not BoardEntry.objects.filter(run=run).exists()
    shown = clients["owner"].get(f"/api/runs/{run.pk}/").json()
    assert (shown["category"], shown["verdict"]) == ("farm", "INCONCLUSIVE")
    other = queued_run(clients, hardware=[GPU])
    r = finish(node, other, verdict="UNSUPPORTED")
    assert r.json()["state"] == "done" and r.json()["verdict"] == "UNSUPPORTED"
    other.refresh_from_db()
    assert (other.category, other.node_faults) == ("farm", 0)


def test_a_farm_verdict_beside_a_workload_the_kernel_failed_is_judged_by_the_workload(
    clients, node, local_storage
):
    """The node's INCONCLUSIVE is not believed over its own document: a workload INCORRECT in
    it makes the run INCORRECT, about the kernel, recorded now and not measured again."""
    run = queued_run(clients)
    node.post(f"/api/agent/runs/{run.pk}/claim/")
    node.post(f"/api/agent/runs/{run.pk}/start/", {"attempt": 1}, format="json")
    doc = result_doc(run, verdict="INCONCLUSIVE")
    doc["workloads"][0]["status"] = "INCORRECT"
    r = node.post(f"/api/agent/runs/{run.pk}/result/", {"attempt": 1, "result": doc}, format="json")
    assert r.status_code == 200, r.content
    assert (r.json()["state"], r.json()["verdict"]) == ("done", "INCORRECT")
    assert r.json()["server_reasons"][0]["code"] == "VERDICT_MILDER_THAN_WORKLOADS"
    run.refresh_from_db()
    assert (run.category, run.node_faults, run.charged_attempts) == ("kernel", 0, 1)


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


def test_malformed_or_foreign_documents_are_refused(clients, node, local_storage):
    run = queued_run(clients)
    node.post(f"/api/agent/runs/{run.pk}/claim/")
    doc = result_doc(run)
    del doc["verdict"]
    r = node.post(f"/api/agent/runs/{run.pk}/result/", {"attempt": 1, "result": doc}, format="json")
    assert r.status_code == 400 and "result.verdict: is required" in r.json()["detail"]
    doc = result_doc(run)
    doc["hardware"] = GPU
    r = node.post(f"/api/agent/runs/{run.pk}/result/", {"attempt": 1, "result": doc}, format="json")
    assert r.status_code == 400 and "result.hardware" in r.json()["detail"]
    run.refresh_from_db()
    assert run.state == "claimed"


def test_suite_hash_mismatch_fails_the_run_and_keeps_evidence(clients, node, local_storage):
    run = queued_run(clients)
    r = finish(node, run, suite_hash="0" * 64)
    assert r.status_code == 200
    assert r.json()["state"] == "failed"
    assert r.json()["server_reasons"][0]["code"] == "SUITE_HASH_MISMATCH"
    assert Result.objects.filter(run=run).exists()


def test_roofline_floor_rejects_impossible_times(clients, node, local_storage):
    run = queued_run(clients, hardware=[GPU])
    r = finish(node, run, time_ms=1e-6)
    assert r.status_code == 200
    body = r.json()
    assert body["verdict"] == "REJECTED"
    assert body["server_reasons"][0]["code"] == "ROOFLINE_FLOOR"
    assert "below the physical floor" in body["server_reasons"][0]["detail"]
    run.refresh_from_db()
    assert run.sol_score is None


def test_a_workload_the_server_cannot_resolve_holds_the_run(clients, node, local_storage):
    """A PASSED time the server cannot check against the floor (its workload is not in the
    server's copy of the suite) is kept, with a reason, and held off the board."""
    run = queued_run(clients, hardware=[GPU])
    r = finish(node, run, workloads=("big", "not-in-the-suite"))
    assert r.status_code == 200
    body = r.json()
    codes = [reason["code"] for reason in body["server_reasons"]]
    assert codes == ["UNCHECKED_WORKLOAD", "UNCHECKED_WORKLOAD"]  # public and secret copy
    assert "not-in-the-suite" in body["server_reasons"][0]["detail"]
    run.refresh_from_db()
    assert run.state == "done" and Result.objects.filter(run=run).exists()
    assert run.audit == Run.Audit.HELD
    assert "could not check 2 workload time(s)" in run.audit_detail


def test_artifacts_go_through_the_server_into_s3_and_their_urls_die_with_the_run(clients, node, s3):
    from rest_framework.test import APIClient

    run = queued_run(clients)
    node.post(f"/api/agent/runs/{run.pk}/claim/")
    r = node.post(
        f"/api/agent/runs/{run.pk}/artifacts/",
        {"attempt": 1, "name": "logs", "content_type": "text/plain"},
        format="json",
    )
    assert r.status_code == 200, r.content
    up = r.json()
    assert up["method"] == "PUT" and "/api/agent/upload/" in up["url"]
    assert "X-Amz-Signature" not in up["url"]  # a presigned URL could not be revoked
    assert up["headers"] == {"Content-Type": "text/plain; charset=utf-8"}  # the server's type
    anonymous = APIClient()
    path = up["url"].replace("http://testserver", "")
    put = anonymous.put(path, b"hello log", content_type="application/octet-stream")
    assert put.status_code == 204
    for name in ("../x", "report.html"):
        bad = node.post(
            f"/api/agent/runs/{run.pk}/artifacts/", {"attempt": 1, "name": name}, format="json"
        )
        assert bad.status_code == 400
    node.post(f"/api/agent/runs/{run.pk}/artifacts/", {"attempt": 1, "name": "worker.log"})
    assert finish(node, run, artifacts=["logs"]).status_code == 200
    link = clients["owner"].get(f"/api/runs/{run.pk}/")
    assert [a["name"] for a in link.json()["artifacts"]] == ["logs"]  # worker.log never came
    redirect = clients["owner"].get(f"/api/runs/{run.pk}/artifacts/logs/")
    assert redirect.status_code == 302
    got = requests.get(redirect["Location"], timeout=10)
    assert got.content == b"hello log"
    assert got.headers["Content-Disposition"] == 'attachment; filename="logs"'
    assert "X-Amz-Expires=900" in redirect["Location"]
    after = node.post(
        f"/api/agent/runs/{run.pk}/artifacts/", {"attempt": 1, "name": "logs"}, format="json"
    )
    assert after.status_code == 409 and "can no longer change" in after.json()["detail"]
    forged = anonymous.put(path, b"forged log", content_type="application/octet-stream")
    assert forged.status_code == 409  # the URL issued before the result is dead now
    again = clients["owner"].get(f"/api/runs/{run.pk}/artifacts/logs/")
    assert requests.get(again["Location"], timeout=10).content == b"hello log"


def test_artifacts_through_signed_local_urls(clients, node, local_storage):
    from rest_framework.test import APIClient

    run = queued_run(clients)
    node.post(f"/api/agent/runs/{run.pk}/claim/")
    up = node.post(
        f"/api/agent/runs/{run.pk}/artifacts/", {"attempt": 1, "name": "logs"}, format="json"
    ).json()
    anonymous = APIClient()
    put = anonymous.put(
        up["url"].replace("http://testserver", ""),
        b"local log",
        content_type="application/octet-stream",
    )
    assert put.status_code == 204
    stored = Artifact.objects.get(run=run, name="logs").stored_key
    assert stored.startswith(up["key"] + ".")  # each upload is stored under its own key
    assert (local_storage / stored).read_bytes() == b"local log"
    forged = anonymous.put(
        up["url"].replace("http://testserver", "")[:-5] + "xxxx/",
        b"evil",
        content_type="application/octet-stream",
    )
    assert forged.status_code == 403
    assert finish(node, run, artifacts=["logs"]).status_code == 200
    redirect = clients["owner"].get(f"/api/runs/{run.pk}/artifacts/logs/")
    got = anonymous.get(redirect["Location"].replace("http://testserver", ""))
    assert got.content == b"local log" and got["Content-Type"] == "text/plain; charset=utf-8"
    assert got["Content-Disposition"] == 'attachment; filename="logs"'


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


def test_node_create_api_then_agent_uses_token(clients, local_storage):
    r = clients["admin"].post("/api/nodes/", {"name": "gpu-7", "hardware": [GPU]}, format="json")
    assert r.status_code == 201
    token = r.json()["token"]
    assert token.startswith("fn_")
    assert Node.objects.get(name="gpu-7").token_hash != token
    from rest_framework.test import APIClient

    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert agent.post("/api/agent/heartbeat/", {}, format="json").status_code == 200
    nodes = clients["anonymous"].get("/api/nodes/").json()
    assert [n["name"] for n in nodes] == ["gpu-7"]
    assert "token" not in nodes[0] and "token_hash" not in nodes[0]
    agent.post("/api/agent/heartbeat/", {"devices": [{"name": "H100", "x": "y"}]}, format="json")
    assert clients["anonymous"].get("/api/nodes/").json()[0]["devices"] == [{"index": 0}]
    assert clients["admin"].get("/api/nodes/").json()[0]["devices"][0]["name"] == "H100"
    flood = {"current_runs": list(range(1, 100_001)), "devices": [{"x": "y" * 70_000}]}
    r = agent.post("/api/agent/heartbeat/", flood, format="json")
    assert r.status_code == 400 and set(r.json()) == {"current_runs", "devices"}


def test_enrolment_with_the_shared_secret(clients, settings, db):
    settings.FARM_NODE_ENROLL_TOKEN = "s3cret-enrol"
    from rest_framework.test import APIClient

    agent = APIClient()
    body = {"name": "auto-1", "hardware": [HW]}
    assert agent.post("/api/agent/enroll/", body, format="json").status_code == 403
    r = agent.post("/api/agent/enroll/", body, format="json", HTTP_X_FARM_ENROLL="s3cret-enrol")
    assert r.status_code == 201 and r.json()["token"].startswith("fn_")
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"credentials": "3/min"},
    }
    codes = [agent.post("/api/agent/enroll/", body, format="json").status_code for _ in range(3)]
    assert codes[-1] == 429  # guesses of the secret are counted per address, wrong ones too


def test_an_unhealthy_node_says_why_and_claims_nothing(clients, node, other_node, local_storage):
    from django.test import Client

    run = queued_run(clients)
    sick = {
        "healthy": False,
        "problems": [{"code": "SELFTEST_FAILED", "detail": "vector_add: cc cannot link"}],
        "checks": 3,
    }
    hb = node.post("/api/agent/heartbeat/", {"current_runs": [], "health": sick}, format="json")
    assert hb.status_code == 200 and hb.json()["status"] == "unhealthy"
    listed = {n["name"]: n for n in clients["anonymous"].get("/api/nodes/").json()}
    assert listed["node-a"]["status"] == "unhealthy"
    assert listed["node-a"]["problems"] == sick["problems"]
    assert listed["node-b"]["problems"] == []
    refused = node.post(f"/api/agent/runs/{run.pk}/claim/")
    assert refused.status_code == 409 and "unhealthy" in refused.json()["detail"]
    page = Client().get("/nodes/").content.decode()
    assert "unhealthy" in page and "vector_add: cc cannot link" in page
    metrics = Client().get("/metrics").content.decode()
    assert 'farm_nodes_unhealthy{node="node-a",problem="SELFTEST_FAILED"} 1.0' in metrics
    well = {"healthy": True, "problems": [], "checks": 4}
    node.post("/api/agent/heartbeat/", {"current_runs": [], "health": well}, format="json")
    assert node.post(f"/api/agent/runs/{run.pk}/claim/").status_code == 200
