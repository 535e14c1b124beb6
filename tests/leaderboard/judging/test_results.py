"""The result post (POST /api/agent/runs/<id>/result/) as judgement sees it: idempotent, refused
when malformed or foreign, a suite hash that differs, times under the roofline floor, a workload
the server cannot resolve, and the farm's own outcomes measured again, uncharged."""

from __future__ import annotations

from leaderboard.boards.models import BoardEntry
from leaderboard.runs.models import Result, Run
from tests.leaderboard.lbkit import GPU, finish, queued_run, result_doc


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
