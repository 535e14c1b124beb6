from lbkit import HW, submit

from leaderboard.problems.models import Problem


def test_catalog_loaded(db):
    assert Problem.objects.filter(suite_id="lbtest-v1").count() == 2


def test_submit_one(clients, local_storage):
    r = submit(clients["owner"])
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["runs"][0]["hardware"] == HW
    assert body["private"] is True
