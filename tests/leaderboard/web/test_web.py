"""Server-rendered pages (without a browser): board with roofline, submission, submit form."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from leaderboard.runs.models import Run
from leaderboard.submissions.models import Submission
from tests.leaderboard.lbkit import GPU, HW, SUITE, VECTOR_ADD, finish, make_node, submit


def test_board_page_shows_entries_ties_and_roofline(clients, users, local_storage):
    node, auditor = make_node("w", [GPU]), make_node("w2", [GPU])
    for client, score in ((clients["owner"], 0.8), (clients["other"], 0.79)):
        body = submit(client, private=False, hardware=[GPU]).json()
        run = Run.objects.get(pk=body["runs"][0]["id"])
        finish(node, run, auditor=auditor, score=score, time_ms=2.0, ci=0.05)
    page = Client().get(f"/boards/{SUITE}/vector_add/{GPU}/").content.decode()
    assert "owner" in page and "other" in page
    assert "=1" in page  # tied entries share rank 1
    assert '<svg class="roofline"' in page and 'class="pt"' in page
    assert Client().get(f"/boards/{SUITE}/nope/{GPU}/").status_code == 404


def test_submission_page_and_cross_hardware(clients, users, local_storage):
    node = make_node("w", [HW, GPU])
    body = submit(clients["owner"], hardware=[HW, GPU]).json()
    for run in Run.objects.filter(submission_id=body["id"]):
        finish(node, run)
    browser = Client()
    browser.force_login(users["owner"])
    page = browser.get(f"/submissions/{body['id']}/").content.decode()
    assert 'id="compare"' in page and HW in page and GPU in page
    assert "return a + b" in page  # the owner sees the source
    other = Client()
    other.force_login(users["other"])
    assert other.get(f"/submissions/{body['id']}/").status_code == 404  # private


def test_submit_form_upload_and_errors(users, local_storage):
    browser = Client()
    assert browser.get("/submit/").status_code == 302  # login first
    browser.force_login(users["owner"])
    assert browser.get("/submit/").status_code == 200
    upload = SimpleUploadedFile("k.py", VECTOR_ADD.encode())
    r = browser.post(
        "/submit/",
        {"problem": f"{SUITE}/vector_add", "hardware": [HW], "mode": "leaderboard", "file": upload},
    )
    assert r.status_code == 302
    sub = Submission.objects.get()
    assert r["Location"] == f"/submissions/{sub.pk}/" and sub.private is False
    r = browser.post(
        "/submit/", {"problem": f"{SUITE}/vector_add", "hardware": [HW], "mode": "test"}
    )
    assert r.status_code == 400 and "is empty" in r.content.decode()


def test_nodes_and_home_pages(clients, local_storage):
    make_node("visible-node", [HW])
    assert "visible-node" in Client().get("/nodes/").content.decode()
    assert Client().get("/").status_code == 200


def test_run_page_shows_the_queue_and_cancels_a_run(clients, users, local_storage):
    body = submit(clients["owner"]).json()
    run_id = body["runs"][0]["id"]
    browser = Client()
    browser.force_login(users["owner"])
    page = browser.get(f"/submissions/{body['id']}/").content.decode()
    assert f"#1 in the {HW} queue" in page and f"no node serves {HW} right now" in page
    assert f'action="/runs/{run_id}/cancel/"' in page
    other = Client()
    other.force_login(users["other"])
    assert other.post(f"/runs/{run_id}/cancel/").status_code == 404
    assert browser.get(f"/runs/{run_id}/cancel/").status_code == 405  # a button, not a link
    done = browser.post(f"/runs/{run_id}/cancel/", follow=True).content.decode()
    assert f"run {run_id} on {HW} is cancelled" in done
    assert "CANCELLED: cancelled by owner while queued" in done and "cancel/" not in done
    assert Run.objects.get(pk=run_id).failure_code == "CANCELLED"


def test_the_owner_reads_why_a_submission_was_marked_hacked(clients, users, local_storage):
    body = submit(clients["owner"], private=False).json()
    note = "reads the reference output through gc.get_objects()"
    r = clients["admin"].post(
        f"/api/submissions/{body['id']}/hacked/", {"hacked": True, "note": note}, format="json"
    )
    assert r.status_code == 200
    owner = Client()
    owner.force_login(users["owner"])
    assert note in owner.get(f"/submissions/{body['id']}/").content.decode()
    assert clients["owner"].get(f"/api/submissions/{body['id']}/").json()["hacked_note"] == note
    other = Client()
    other.force_login(users["other"])
    page = other.get(f"/submissions/{body['id']}/").content.decode()
    assert "marked hacked" in page and note not in page
    assert clients["other"].get(f"/api/submissions/{body['id']}/").json()["hacked_note"] is None
