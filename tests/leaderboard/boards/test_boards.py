"""Board rules: what counts, ranking by SOL score, ties by confidence interval, hacked."""

from __future__ import annotations

from leaderboard.boards.models import BoardEntry
from leaderboard.runs.models import Result, Run
from tests.leaderboard.lbkit import HW, SUITE, finish, make_node, submit, user_client

BOARD = f"/api/boards/{SUITE}/vector_add/{HW}/"


def nodes():
    """A node, with a second node of the class as its `auditor`."""
    node = make_node("board-node", [HW])
    node.auditor = make_node("audit-node", [HW])
    return node


def scored(client, node, *, score, time_ms=5.0, ci=0.01, **fields):
    """A scored leaderboard run; a would-be first place is audited (and agrees) on node.auditor."""
    body = submit(client, private=False, **fields).json()
    run = Run.objects.get(pk=body["runs"][0]["id"])
    r = finish(node, run, auditor=node.auditor, score=score, time_ms=time_ms, ci=ci)
    assert r.status_code == 200, r.content
    return body["id"]


def entries(client):
    r = client.get(BOARD)
    assert r.status_code == 200, r.content
    return r.json()["entries"]


def test_ranking_ties_and_best_per_user(db, local_storage, django_user_model):
    node = nodes()
    a, b, c = (user_client(django_user_model.objects.create_user(n)) for n in ("ann", "bob", "cy"))
    scored(a, node, score=0.9, time_ms=2.0)
    scored(a, node, score=0.4, time_ms=9.0, label="worse")  # not ann's best: ignored
    scored(b, node, score=0.50, time_ms=5.00, ci=0.02)
    scored(c, node, score=0.49, time_ms=5.05, ci=0.02)  # intervals overlap bob's: tied
    rows = entries(a)
    assert [(e["user"], e["rank"], e["tied"]) for e in rows] == [
        ("ann", 1, False),
        ("bob", 2, True),
        ("cy", 2, True),
    ]
    top = rows[0]
    assert top["sol_score"] == 0.9 and abs(top["time_ms"] - 2.0) < 1e-9
    assert abs(top["speedup_eager"] - 2.0) < 1e-9
    assert top["fraction_of_sol"] is not None


def test_separated_intervals_are_ranked_apart(db, local_storage, django_user_model):
    node = nodes()
    b, c = (user_client(django_user_model.objects.create_user(n)) for n in ("bob", "cy"))
    scored(b, node, score=0.50, time_ms=5.0, ci=0.001)
    scored(c, node, score=0.49, time_ms=5.2, ci=0.001)
    assert [(e["rank"], e["tied"]) for e in entries(b)] == [(1, False), (2, False)]


def test_only_valid_leaderboard_runs_count(clients, local_storage):
    node = nodes()
    owner = clients["owner"]
    scored(owner, node, score=0.7, mode="benchmark")
    body = submit(owner, private=True).json()  # private: never on a board
    finish(node, Run.objects.get(pk=body["runs"][0]["id"]), score=0.8)
    body = submit(owner, private=False, label="no-secret").json()
    finish(node, Run.objects.get(pk=body["runs"][0]["id"]), score=0.95, secret=False)
    body = submit(owner, private=False, label="wrong").json()
    finish(node, Run.objects.get(pk=body["runs"][0]["id"]), score=0.99, verdict="INCORRECT")
    assert entries(owner) == []
    assert Result.objects.count() == 4  # all kept, none counted
    scored(owner, node, score=0.3, label="honest")
    assert [e["sol_score"] for e in entries(owner)] == [0.3]


def test_hacked_removes_from_boards_and_keeps_evidence(clients, local_storage):
    node = nodes()
    cheat = scored(clients["other"], node, score=0.99)
    scored(clients["owner"], node, score=0.5)
    assert [e["user"] for e in entries(clients["owner"])] == ["other", "owner"]
    url = f"/api/submissions/{cheat}/hacked/"
    assert clients["owner"].post(url, {"hacked": True}, format="json").status_code == 403
    r = clients["admin"].post(url, {"hacked": True, "note": "cached outputs"}, format="json")
    assert r.status_code == 200 and r.json()["hacked"] is True
    assert [e["user"] for e in entries(clients["owner"])] == ["owner"]
    assert Result.objects.filter(run__submission_id=cheat).exists()
    assert (
        clients["admin"].get(f"/api/submissions/{cheat}/").json()["runs"][0]["verdict"] == "PASSED"
    )
    clients["admin"].post(url, {"hacked": False}, format="json")
    assert [e["user"] for e in entries(clients["owner"])] == ["other", "owner"]


def test_admin_action_marks_hacked(clients, users, local_storage):
    from django.test import Client

    node = nodes()
    cheat = scored(clients["other"], node, score=0.99)
    browser = Client()
    browser.force_login(users["admin"])
    r = browser.post(
        "/admin/submissions/submission/", {"action": "mark_hacked", "_selected_action": [cheat]}
    )
    assert r.status_code == 302
    assert BoardEntry.objects.count() == 0


def test_unknown_board_says_did_you_mean(clients, db):
    r = clients["anonymous"].get(f"/api/boards/{SUITE}/vector_ad/{HW}/")
    assert r.status_code == 404 and "did you mean 'vector_add'" in r.json()["detail"]
    empty = clients["anonymous"].get(BOARD)
    assert empty.status_code == 200 and empty.json()["entries"] == []
