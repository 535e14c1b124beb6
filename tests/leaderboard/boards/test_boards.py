"""Board rules: what counts, ranking by SOL score, ties (confidence intervals on measured
devices, equal times and the earlier submission first on a deterministic one), hacked."""

from __future__ import annotations

from leaderboard.boards.models import BoardEntry
from leaderboard.runs.models import Result, Run
from tests.leaderboard.lbkit import GPU, HW, SUITE, finish, make_node, submit, user_client

BOARD = f"/api/boards/{SUITE}/vector_add/{HW}/"  # npu-sim: a deterministic device
GPU_BOARD = f"/api/boards/{SUITE}/vector_add/{GPU}/"


def nodes(hardware=HW):
    """A node, with a second node of the class as its `auditor`."""
    node = make_node(f"board-node-{hardware}", [hardware])
    node.auditor = make_node(f"audit-node-{hardware}", [hardware])
    node.hardware = hardware
    return node


def scored(client, node, *, score, time_ms=5.0, ci=0.01, **fields):
    """A scored leaderboard run on the node's hardware; a would-be first place is audited (and
    agrees) on node.auditor."""
    fields.setdefault("hardware", [getattr(node, "hardware", HW)])
    body = submit(client, private=False, **fields).json()
    run = Run.objects.get(pk=body["runs"][0]["id"])
    r = finish(node, run, auditor=node.auditor, score=score, time_ms=time_ms, ci=ci)
    assert r.status_code == 200, r.content
    return body["id"]


def entries(client, board=BOARD):
    r = client.get(board)
    assert r.status_code == 200, r.content
    return r.json()["entries"]


def test_ranking_ties_and_best_per_user(db, local_storage, django_user_model):
    node = nodes(GPU)
    a, b, c = (user_client(django_user_model.objects.create_user(n)) for n in ("ann", "bob", "cy"))
    scored(a, node, score=0.9, time_ms=2.0)
    scored(a, node, score=0.4, time_ms=9.0, label="worse")  # not ann's best: ignored
    scored(b, node, score=0.50, time_ms=5.00, ci=0.02)
    scored(c, node, score=0.49, time_ms=5.05, ci=0.02)  # intervals overlap bob's: tied
    rows = entries(a, GPU_BOARD)
    assert [(e["user"], e["rank"], e["tied"]) for e in rows] == [
        ("ann", 1, False),
        ("bob", 2, True),
        ("cy", 2, True),
    ]
    top = rows[0]
    assert top["sol_score"] == 0.9 and abs(top["time_ms"] - 2.0) < 1e-9
    assert abs(top["speedup_eager"] - 2.0) < 1e-9
    assert top["fraction_of_sol"] is not None
    big = top["workloads"]["big"]
    assert (big["time_ms"], big["sol_score"], big["eager_ms"]) == (2.0, 0.9, 4.0)
    assert big["sol_ms"] > 0  # the server's bound, not the node's
    assert set(top["workloads"]) == {"big", "small"}  # public workloads only


def test_separated_intervals_are_ranked_apart(db, local_storage, django_user_model):
    node = nodes(GPU)
    b, c = (user_client(django_user_model.objects.create_user(n)) for n in ("bob", "cy"))
    scored(b, node, score=0.50, time_ms=5.0, ci=0.001)
    scored(c, node, score=0.49, time_ms=5.2, ci=0.001)
    assert [(e["rank"], e["tied"]) for e in entries(b, GPU_BOARD)] == [(1, False), (2, False)]


def test_a_measured_time_without_spread_is_taken_with_the_timing_noise(
    db, local_storage, django_user_model
):
    node = nodes(GPU)
    b, c, d = (user_client(django_user_model.objects.create_user(n)) for n in ("bob", "cy", "di"))
    scored(b, node, score=0.50, time_ms=5.0, ci=0.0)  # no spread: 5.0 +- 2 %
    scored(c, node, score=0.49, time_ms=5.15, ci=0.0)  # 3 % slower: within both noises
    scored(d, node, score=0.40, time_ms=5.6, ci=0.0)  # 9 % slower than cy: apart
    assert [(e["user"], e["rank"], e["tied"]) for e in entries(b, GPU_BOARD)] == [
        ("bob", 1, True),
        ("cy", 1, True),
        ("di", 3, False),
    ]


def test_deterministic_device_ties_equal_times_and_keeps_the_earlier_first(
    db, local_storage, django_user_model
):
    node = nodes(HW)
    a, b, c = (user_client(django_user_model.objects.create_user(n)) for n in ("ann", "bob", "cy"))
    scored(a, node, score=0.6180, time_ms=5.0, ci=0.0)
    # a later copy that the model timed 0.01 % faster (a different schedule of the same work)
    scored(b, node, score=0.6181, time_ms=4.9995, ci=0.0)
    scored(c, node, score=0.6100, time_ms=5.1, ci=0.0)  # 2 % slower: ranked below
    body = entries_doc(a, BOARD)
    assert body["deterministic"] is True
    assert [(e["user"], e["rank"], e["tied"]) for e in body["entries"]] == [
        ("ann", 1, True),
        ("bob", 1, True),
        ("cy", 3, False),
    ]
    first, second = body["entries"][:2]
    assert first["submitted_at"] < second["submitted_at"]


def test_measured_device_orders_a_tie_by_score(db, local_storage, django_user_model):
    node = nodes(GPU)
    a, b = (user_client(django_user_model.objects.create_user(n)) for n in ("ann", "bob"))
    scored(a, node, score=0.6180, time_ms=5.0, ci=0.01)
    scored(b, node, score=0.6181, time_ms=4.9995, ci=0.01)
    body = entries_doc(a, GPU_BOARD)
    assert body["deterministic"] is False
    assert [(e["user"], e["rank"], e["tied"]) for e in body["entries"]] == [
        ("bob", 1, True),
        ("ann", 1, True),
    ]


def entries_doc(client, board):
    r = client.get(board)
    assert r.status_code == 200, r.content
    return r.json()


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


def test_a_near_identical_copy_of_a_public_kernel_is_flagged_not_removed(
    db, local_storage, django_user_model
):
    from leaderboard.boards.models import Board
    from leaderboard.boards.services import board_update
    from tests.leaderboard.boards.test_likeness import PERSISTENT, RETYPED, TILED

    node = nodes(GPU)
    a, b, c = (user_client(django_user_model.objects.create_user(n)) for n in ("ann", "bob", "cy"))
    original = scored(a, node, score=0.6, time_ms=5.0, source=TILED)
    board_update(board=Board.objects.get(hardware_id=GPU), sources_public=True)
    scored(b, node, score=0.7, time_ms=4.0, source=RETYPED)  # a retyped copy, faster
    scored(c, node, score=0.5, time_ms=6.0, source=PERSISTENT)  # written differently
    rows = {e["user"]: e for e in entries(a, GPU_BOARD)}
    assert [e["user"] for e in entries(a, GPU_BOARD)] == ["bob", "ann", "cy"]  # kept in place
    flag = rows["bob"]["copy_of"]
    assert (flag["submission"], flag["user"]) == (original, "ann") and flag["likeness"] >= 0.9
    assert rows["ann"]["copy_of"] is None and rows["cy"]["copy_of"] is None


def test_a_copy_of_a_kernel_whose_source_is_not_public_is_not_flagged(
    db, local_storage, django_user_model
):
    from tests.leaderboard.boards.test_likeness import RETYPED, TILED

    node = nodes(GPU)
    a, b = (user_client(django_user_model.objects.create_user(n)) for n in ("ann", "bob"))
    scored(a, node, score=0.6, time_ms=5.0, source=TILED)
    scored(b, node, score=0.7, time_ms=4.0, source=RETYPED)
    assert [e["copy_of"] for e in entries(a, GPU_BOARD)] == [None, None]
