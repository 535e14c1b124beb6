"""Server-rendered pages (without a browser): board with roofline, submission, submit form."""

from __future__ import annotations

import re

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


def _board_page(hardware, node, entries, **doc):
    """Scored public entries (client, score, time_ms) on `hardware`; the rendered board page."""
    auditor = make_node(f"{node}-audit", [hardware])
    worker = make_node(node, [hardware])
    for client, score, time_ms in entries:
        body = submit(client, private=False, hardware=[hardware]).json()
        run = Run.objects.get(pk=body["runs"][0]["id"])
        finish(worker, run, auditor=auditor, score=score, time_ms=time_ms, **doc)
    return Client().get(f"/boards/{SUITE}/vector_add/{hardware}/").content.decode()


def _table(page, table_id):
    start = page.index(f'<table id="{table_id}"')
    return page[start : page.index("</table>", start)]


def test_board_page_shows_the_scored_workloads_everywhere(clients, users, local_storage):
    page = _board_page(
        HW,
        "sim",
        [(clients["owner"], 0.8, 2.0), (clients["other"], 0.5, 4.0)],
        workloads=("small",),  # a node that keeps simulated boards to the small workloads
    )
    board, sol = _table(page, "board"), _table(page, "sol")
    assert "small" in board and "N=4096 float32" in board  # the per-workload column
    assert ">big<" not in board and ">big<" not in sol  # the unscored size is on no table
    assert "<td>small</td>" in sol and "N=4096 float32" in sol
    assert 'id="eager-row"' in board and "4<small>" in board  # eager 2 x 2.0 ms of the first
    assert "of SOL</small>" in board
    assert "Launch (ms)" in sol and "8.5 µs" in page  # npu-sim's bound includes the launch
    assert "deterministic" in page and "costs exactly what the reference does" in page
    assert 'class="workload"' in page and ">small</text>" in page  # the roofline's workload line
    tags = re.findall(r'class="pt-label"[^>]*>([^<]*)</text>', page)
    assert tags and {"#1", "#2"} <= set(" ".join(tags).split())  # points carry their rank


def test_gpu_board_page_says_ties_come_from_intervals(clients, users, local_storage):
    page = _board_page(GPU, "gpu", [(clients["owner"], 0.8, 2.0)])
    assert "95 % time intervals overlap" in page and "timed like a submission" in page
    assert "Launch (ms)" not in page
    assert ">big<" in _table(page, "sol") and ">small<" in _table(page, "sol")


def test_board_page_flags_a_copy_of_a_public_kernel(clients, users, local_storage):
    from leaderboard.boards.models import Board
    from leaderboard.boards.services import board_update
    from tests.leaderboard.boards.test_likeness import RETYPED, TILED

    worker, auditor = make_node("w", [GPU]), make_node("w2", [GPU])
    for client, source, score in ((clients["owner"], TILED, 0.6), (clients["other"], RETYPED, 0.7)):
        body = submit(client, private=False, hardware=[GPU], source=source).json()
        finish(worker, Run.objects.get(pk=body["runs"][0]["id"]), auditor=auditor, score=score)
        board_update(board=Board.objects.get(hardware_id=GPU), sources_public=True)
    page = Client().get(f"/boards/{SUITE}/vector_add/{GPU}/").content.decode()
    original = Submission.objects.get(user=users["owner"]).pk
    assert f"≈ copy of #{original} (owner)" in page
    assert page.count("≈ copy of") == 1
