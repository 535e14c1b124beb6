"""A run's artifacts: uploaded by its node through URLs the server gives (S3 presigned or the
server's own signed URLs), read by the run's owner, and dead once the run is taken back."""

from __future__ import annotations

import requests

from leaderboard.artifacts.models import Artifact
from tests.leaderboard.lbkit import finish, queued_run


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
