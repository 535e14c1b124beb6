"""Runs that end without a result: cancelled by their owner, or failed because no node of their
class served them in time; and where a queued run stands in its queue."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from leaderboard.nodes.models import Node
from leaderboard.runs.models import Result, Run
from leaderboard.runs.upkeep import runs_fail_unserved
from tests.leaderboard.lbkit import GPU, HW, finish, result_doc, server_hearing_since, submit


def queued_run(clients, **fields) -> Run:
    body = submit(clients["owner"], **fields).json()
    return Run.objects.get(pk=body["runs"][0]["id"])


def cancel(client, run: Run):
    return client.post(f"/api/runs/{run.pk}/cancel/")


def test_a_cancelled_queued_run_is_never_claimed(clients, node, local_storage):
    run = queued_run(clients)
    r = cancel(clients["owner"], run)
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["state"], body["failure_code"], body["category"]) == (
        "failed",
        "CANCELLED",
        "farm",
    )
    assert body["failure_detail"] == "cancelled by owner while queued" and body["queue"] is None
    claim = node.post(f"/api/agent/runs/{run.pk}/claim/")
    assert claim.status_code == 409 and "was cancelled; drop the job" in claim.json()["detail"]
    run.refresh_from_db()
    assert (run.state, run.attempt, run.node_id) == ("failed", 0, None)
    again = cancel(clients["owner"], run)
    assert again.status_code == 200 and again.json()["failure_code"] == "CANCELLED"


def test_only_the_owner_and_admins_may_cancel(clients, local_storage):
    run = queued_run(clients)
    assert cancel(clients["other"], run).status_code == 404  # a private run is not visible
    assert cancel(clients["anonymous"], run).status_code in (401, 403)
    run.submission.private = False
    run.submission.save(update_fields=["private"])
    r = cancel(clients["other"], run)
    assert r.status_code == 403 and "owner and admins" in r.json()["detail"]
    assert Run.objects.get(pk=run.pk).state == "queued"
    admin = cancel(clients["admin"], run).json()
    assert admin["failure_detail"] == "cancelled by admin while queued"


def test_a_running_run_is_abandoned_and_its_late_result_refused(clients, node, local_storage):
    run = queued_run(clients)
    attempt = node.post(f"/api/agent/runs/{run.pk}/claim/").json()["attempt"]
    node.post(f"/api/agent/runs/{run.pk}/start/", {"attempt": attempt}, format="json")
    assert cancel(clients["owner"], run).json()["failure_detail"].endswith("while running")
    hb = node.post("/api/agent/heartbeat/", {"current_runs": [run.pk]}, format="json").json()
    assert hb["abandon"] == [run.pk]
    late = {"attempt": attempt, "result": result_doc(run)}
    r = node.post(f"/api/agent/runs/{run.pk}/result/", late, format="json")
    assert r.status_code == 409 and "was cancelled while this node held" in r.json()["detail"]
    failure = {"code": "SANDBOX", "detail": "the sandbox died", "retryable": True}
    r = node.post(
        f"/api/agent/runs/{run.pk}/result/", {"attempt": attempt, "failure": failure}, format="json"
    )
    assert r.status_code == 409 and "was cancelled" in r.json()["detail"]
    up = node.post(f"/api/agent/runs/{run.pk}/artifacts/", {"attempt": attempt, "name": "logs"})
    assert up.status_code == 409
    run.refresh_from_db()
    assert (run.state, run.failure_code, run.charged_attempts) == ("failed", "CANCELLED", 1)
    assert not Result.objects.filter(run=run).exists()


def test_a_finished_run_cannot_be_cancelled(clients, node, local_storage):
    run = queued_run(clients)
    assert finish(node, run).status_code == 200
    r = cancel(clients["owner"], run)
    assert r.status_code == 409 and "has finished (done PASSED)" in r.json()["detail"]
    assert Run.objects.get(pk=run.pk).verdict == "PASSED"


def test_a_queued_run_shows_its_position_and_whether_a_node_serves_it(clients, local_storage):
    first, second = queued_run(clients), queued_run(clients, label="2")
    other_class = queued_run(
        clients, hardware=[GPU], source="def kernel(a, b):\n    return b + a\n"
    )
    detail = clients["owner"].get(f"/api/runs/{second.pk}/").json()
    assert detail["queue"]["position"] == 2
    warning = detail["queue"]["warning"]
    assert f"no node serves {HW} right now (this farm has no node for it)" in warning
    assert "at most 6 h, then fails as NO_NODE (FARM_UNSERVED_FAIL_AFTER_S)" in warning
    assert clients["owner"].get(f"/api/runs/{other_class.pk}/").json()["queue"]["position"] == 1
    cancel(clients["owner"], first)
    assert clients["owner"].get(f"/api/runs/{second.pk}/").json()["queue"]["position"] == 1


def test_a_queued_run_with_a_node_has_no_warning(clients, node, local_storage):
    run = queued_run(clients)
    queue = clients["owner"].get(f"/api/runs/{run.pk}/").json()["queue"]
    assert queue == {"position": 1, "warning": None}


def age(run: Run, seconds: float) -> None:
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=seconds))


def test_a_run_no_node_serves_fails_after_the_stated_time(clients, local_storage, settings):
    settings.FARM_UNSERVED_FAIL_AFTER_S = 3600
    server_hearing_since(timezone.now() - timedelta(hours=2))
    old, young = queued_run(clients), queued_run(clients, label="young")
    age(old, 3700)
    age(young, 600)
    assert runs_fail_unserved() == 1
    old.refresh_from_db()
    assert (old.state, old.failure_code, old.category) == ("failed", "NO_NODE", "farm")
    assert f"no node served {HW} for 1 h (FARM_UNSERVED_FAIL_AFTER_S=3600)" in old.failure_detail
    assert Run.objects.get(pk=young.pk).state == "queued"
    assert runs_fail_unserved() == 0


def test_a_class_with_a_live_node_keeps_its_old_runs_queued(clients, node, local_storage, settings):
    settings.FARM_UNSERVED_FAIL_AFTER_S = 3600
    server_hearing_since(timezone.now() - timedelta(hours=2))
    run = queued_run(clients)
    age(run, 7200)
    assert runs_fail_unserved() == 0  # busy, not absent: the run waits its turn
    Node.objects.filter(pk=node.node.pk).update(last_heartbeat=timezone.now() - timedelta(hours=3))
    assert runs_fail_unserved() == 1


def test_nothing_fails_while_the_server_itself_was_not_hearing(clients, local_storage, settings):
    settings.FARM_UNSERVED_FAIL_AFTER_S = 3600
    server_hearing_since(timezone.now() - timedelta(seconds=10))  # just back from an outage
    run = queued_run(clients)
    age(run, 7200)
    assert runs_fail_unserved() == 0
    assert Run.objects.get(pk=run.pk).state == "queued"
