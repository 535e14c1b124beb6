"""The audit rule: a result that would take first place is re-run on another node of the class
(same mode, fresh secret seed) before it shows; a disagreement beyond noise holds it for an
operator with both results kept."""

from __future__ import annotations

import pytest

from leaderboard.judging import operator
from leaderboard.runs.models import Result, Run
from leaderboard.runs.services import runs_resend_unsent, runs_send
from tests.leaderboard.lbkit import HW, SUITE, finish, make_node, submit
from tests.leaderboard.runs.test_dispatch import drain

BOARD = f"/api/boards/{SUITE}/vector_add/{HW}/"


def scored(client, node, **doc):
    body = submit(client, private=False).json()
    run = Run.objects.get(pk=body["runs"][0]["id"])
    assert finish(node, run, **doc).status_code == 200
    run.refresh_from_db()
    return run


def board(client):
    return [(e["user"], e["sol_score"]) for e in client.get(BOARD).json()["entries"]]


def test_first_place_is_audited_on_another_node_before_it_shows(clients, local_storage):
    first, second = make_node("first", [HW]), make_node("second", [HW])
    owner = clients["owner"]
    run = scored(owner, first, score=0.8)
    assert run.audit == "pending" and "re-run as run" in run.audit_detail
    assert board(owner) == []  # not shown while the audit is pending

    audit = Run.objects.get(audit_of=run)
    assert (audit.state, audit.mode, audit.hardware_id) == ("queued", "leaderboard", HW)
    assert (audit.submission_id, audit.user_id) == (run.submission_id, run.user_id)
    node_q = f"hw.{HW}.node-{second.node.pk}"
    drain(node_q), drain(f"hw.{HW}")
    assert runs_send(run_ids=[audit.pk]) == 1
    assert drain(f"hw.{HW}") == [] and [a for _, a in drain(node_q)] == [[audit.pk]]

    refused = first.post(f"/api/agent/runs/{audit.pk}/claim/")
    assert refused.status_code == 409 and "another node" in refused.json()["detail"]
    assert finish(second, audit, score=0.79).status_code == 200  # within noise

    run.refresh_from_db()
    assert run.audit == "confirmed" and "second" in run.audit_detail
    assert board(owner) == [("owner", 0.8)]  # the audited run, not the audit run

    status = owner.get(f"/api/submissions/{run.submission_id}/").json()
    assert [(r["id"], r["audit"]) for r in status["runs"]] == [(run.pk, "confirmed")]
    assert status["state"] == "done"
    detail = owner.get(f"/api/runs/{run.pk}/").json()
    assert detail["audit_run"] == audit.pk and detail["audit_of"] is None
    assert owner.get(f"/api/runs/{audit.pk}/").json()["audit_of"] == run.pk


def test_a_result_below_first_place_shows_at_once(clients, local_storage):
    first, second = make_node("first", [HW]), make_node("second", [HW])
    leader = scored(clients["other"], first, score=0.9, auditor=second)
    assert leader.audit == "confirmed"
    run = scored(clients["owner"], first, score=0.5)
    assert run.audit == "" and not Run.objects.filter(audit_of=run).exists()
    assert board(clients["owner"]) == [("other", 0.9), ("owner", 0.5)]
    tie = scored(clients["admin"], first, score=0.9)  # a tie for first is audited too
    assert tie.audit == "pending"


def test_disagreement_holds_the_entry_and_keeps_both_results(clients, local_storage):
    first, second = make_node("first", [HW]), make_node("second", [HW])
    owner = clients["owner"]
    run = scored(owner, first, score=0.8, time_ms=1.0, ci=0.01, auditor=None)
    audit = Run.objects.get(audit_of=run)
    assert finish(second, audit, score=0.4, time_ms=2.0, ci=0.01).status_code == 200

    run.refresh_from_db()
    assert run.audit == "held"
    assert "SOL score 0.8 vs 0.4" in run.audit_detail and "big 1 ms vs 2 ms" in run.audit_detail
    assert board(owner) == []
    assert Result.objects.filter(run__in=[run, audit]).count() == 2  # both kept

    assert operator.audit_rerun(run)  # operator: run the audit again
    run.refresh_from_db()
    audit.refresh_from_db()
    assert run.audit == "pending" and audit.state == "queued"
    assert not Result.objects.filter(run=audit).exists()
    assert finish(second, audit, score=0.4, time_ms=2.0).status_code == 200
    run.refresh_from_db()
    assert run.audit == "held"

    assert operator.audit_release(run, by="admin")  # operator: show it after all
    run.refresh_from_db()
    assert run.audit == "confirmed" and "Released by admin" in run.audit_detail
    assert board(owner) == [("owner", 0.8)]
    assert not operator.audit_release(run, by="admin")  # only held runs are released


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"verdict": "INCORRECT"}, "its verdict is INCORRECT"),
        ({"secret": False}, "secret-seed workloads did not all pass"),
    ],
)
def test_an_audit_that_fails_where_the_original_passed_holds_it(
    clients, local_storage, doc, expected
):
    first, second = make_node("first", [HW]), make_node("second", [HW])
    run = scored(clients["owner"], first, score=0.8)
    assert finish(second, Run.objects.get(audit_of=run), score=0.8, **doc).status_code == 200
    run.refresh_from_db()
    assert run.audit == "held" and expected in run.audit_detail


def test_an_audit_that_cannot_be_evaluated_holds_it(clients, local_storage):
    first, second = make_node("first", [HW]), make_node("second", [HW])
    run = scored(clients["owner"], first, score=0.8)
    audit = Run.objects.get(audit_of=run)
    attempt = second.post(f"/api/agent/runs/{audit.pk}/claim/").json()["attempt"]
    failure = {"code": "SANDBOX_CRASH", "detail": "no sandbox", "retryable": False}
    r = second.post(
        f"/api/agent/runs/{audit.pk}/result/",
        {"attempt": attempt, "failure": failure},
        format="json",
    )
    assert r.status_code == 200, r.content
    run.refresh_from_db()
    assert run.audit == "held" and "SANDBOX_CRASH" in run.audit_detail


def test_with_no_other_node_the_audit_waits_unsent_until_one_comes(
    clients, local_storage, settings
):
    settings.FARM_AUDIT_SINGLE_NODE = "wait"
    only = make_node("only", [HW])
    run = scored(clients["owner"], only, score=0.8)
    audit = Run.objects.get(audit_of=run)
    assert "waiting for another online" in run.audit_detail
    drain(f"hw.{HW}")
    assert runs_send(run_ids=[audit.pk]) == 0  # the only node may not audit its own result
    audit.refresh_from_db()
    assert audit.state == "queued" and audit.sent_at is None and drain(f"hw.{HW}") == []

    later = make_node("later", [HW])
    Run.objects.filter(pk=audit.pk).update(created_at=audit.created_at.replace(year=2000))
    assert runs_resend_unsent(older_than_s=0) == 1
    assert [a for _, a in drain(f"hw.{HW}.node-{later.node.pk}")] == [[audit.pk]]


def test_a_single_node_class_audits_on_its_node_or_skips_by_policy(
    clients, local_storage, settings
):
    only = make_node("only", [HW])
    run = scored(clients["owner"], only, score=0.8)  # FARM_AUDIT_SINGLE_NODE=same-node
    audit = Run.objects.get(audit_of=run)
    drain(f"hw.{HW}")
    assert runs_send(run_ids=[audit.pk]) == 1
    assert [a for _, a in drain(f"hw.{HW}.node-{only.node.pk}")] == [[audit.pk]]
    assert finish(only, audit, score=0.8).status_code == 200
    run.refresh_from_db()
    assert run.audit == "confirmed" and board(clients["owner"]) == [("owner", 0.8)]
    settings.FARM_AUDIT_SINGLE_NODE = "skip"
    assert scored(clients["other"], only, score=0.9).audit == ""


def test_a_single_node_with_two_gpus_audits_on_the_other_gpu(clients, local_storage):
    from leaderboard.nodes.services import node_heartbeat

    only = make_node("only", [HW])
    gpus = [{"hardware": HW, "device": "cuda", "index": i, "name": "GPU"} for i in (0, 1)]
    node_heartbeat(node=only.node, current_runs=[], devices=gpus)
    run = scored(clients["owner"], only, score=0.8, device_index=1)
    assert run.device_index == 1
    audit = Run.objects.get(audit_of=run)
    node_q = f"hw.{HW}.node-{only.node.pk}"
    drain(f"hw.{HW}"), drain(node_q), drain(f"{node_q}.gpu-0")
    assert runs_send(run_ids=[audit.pk]) == 1
    assert drain(node_q) == [] and [a for _, a in drain(f"{node_q}.gpu-0")] == [[audit.pk]]

    refused = only.post(f"/api/agent/runs/{audit.pk}/claim/", {"device_index": 1}, format="json")
    assert refused.status_code == 409 and "another GPU" in refused.json()["detail"]
    assert finish(only, audit, score=0.8, device_index=0).status_code == 200
    audit.refresh_from_db()
    run.refresh_from_db()
    assert audit.device_index == 0 and run.audit == "confirmed"
    registered = only.post(
        "/api/agent/register/", {"hardware": [HW], "devices": gpus}, format="json"
    ).json()
    assert f"{node_q}.gpu-1" in registered["queues"]


def test_audit_off_and_skipped_classes_show_at_once(clients, local_storage, settings):
    node = make_node("first", [HW])
    settings.FARM_AUDIT_SKIP_HARDWARE = [HW]
    assert scored(clients["owner"], node, score=0.8).audit == ""
    settings.FARM_AUDIT_SKIP_HARDWARE, settings.FARM_AUDIT = [], False
    assert scored(clients["other"], node, score=0.9, time_ms=2.0).audit == ""
    assert board(clients["owner"]) == [("other", 0.9), ("owner", 0.8)]
    assert not Run.objects.exclude(audit_of=None).exists()


def test_quota_does_not_count_audit_runs(clients, local_storage, settings):
    settings.FARM_QUOTA_RUNS_PER_HOUR = 2
    first = make_node("first", [HW])
    scored(clients["owner"], first, score=0.8)  # one run, plus its audit run
    assert Run.objects.count() == 2
    assert submit(clients["owner"], private=False, label="second").status_code == 201
    assert submit(clients["owner"], private=False, label="third").status_code == 429
