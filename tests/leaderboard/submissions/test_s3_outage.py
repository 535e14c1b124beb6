"""S3 faults: unreachable storage loses no submission, reads fail with a clear 503, and the
pending sources are stored once storage is back (a hung S3 and the store's timeouts:
tests/leaderboard/artifacts/test_store.py)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from leaderboard.artifacts.store import ArtifactStoreError
from leaderboard.runs.models import Run
from leaderboard.submissions import tasks
from leaderboard.submissions.models import Source
from tests.leaderboard.lbkit import HW, VECTOR_ADD, free_port, make_node, submit


def dead_endpoint() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


def test_submission_survives_s3_down_and_is_stored_later(
    clients, s3, django_capture_on_commit_callbacks
):
    with override_settings(AWS_S3_ENDPOINT_URL=dead_endpoint()):
        with django_capture_on_commit_callbacks(execute=True):
            r = submit(clients["owner"])
        assert r.status_code == 201, r.content
        sha = r.json()["source_sha256"]
        source = Source.objects.get(sha256=sha)
        assert source.pending_text == VECTOR_ADD and source.stored_at is None
        # an agent can still be served: the text is in the database
        node = make_node("n", [HW])
        claim = node.post(f"/api/agent/runs/{r.json()['runs'][0]['id']}/claim/")
        assert claim.status_code == 200 and claim.json()["source"] == VECTOR_ADD
        with pytest.raises(ArtifactStoreError, match="unavailable after"):
            tasks.store_source(sha)
    assert tasks.store_source(sha) is True  # storage back: the retry stores it
    source.refresh_from_db()
    assert source.pending_text is None and source.stored_at is not None
    assert s3.get_object(Bucket=s3.bucket, Key=source.key)["Body"].read().decode() == VECTOR_ADD


def test_sweep_stores_every_pending_source(clients, s3, django_capture_on_commit_callbacks):
    with override_settings(AWS_S3_ENDPOINT_URL=dead_endpoint()):
        with django_capture_on_commit_callbacks(execute=True):
            for i in range(3):
                submit(clients["owner"], source=VECTOR_ADD + f"# {i}\n")
        assert tasks.store_pending_sources() == 0
    assert Source.objects.filter(pending_text__isnull=False).count() == 3
    assert tasks.store_pending_sources() == 3
    assert Source.objects.filter(pending_text__isnull=False).count() == 0


def test_reads_fail_with_a_clear_503_while_s3_is_down(
    clients, s3, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        body = submit(clients["owner"]).json()
    assert Source.objects.get(sha256=body["source_sha256"]).pending_text is None
    node = make_node("n", [HW])
    with override_settings(AWS_S3_ENDPOINT_URL=dead_endpoint()):
        r = clients["owner"].get(f"/api/submissions/{body['id']}/source/")
        assert r.status_code == 503
        assert r["Retry-After"] == "30"
        assert "artifact storage is unavailable" in r.json()["detail"]
        assert "nothing was lost" in r.json()["detail"]
        status = clients["owner"].get(f"/api/submissions/{body['id']}/")
        assert status.status_code == 200  # status reads do not need S3
        claim = node.post(f"/api/agent/runs/{body['runs'][0]['id']}/claim/")
        assert claim.status_code == 503
        run = Run.objects.get(pk=body["runs"][0]["id"])
        assert (run.state, run.attempt, run.node_id) == ("queued", 0, None)  # nothing charged
    claim = node.post(f"/api/agent/runs/{body['runs'][0]['id']}/claim/")  # the agent retries
    assert claim.status_code == 200 and claim.json()["attempt"] == 1


def test_a_source_missing_from_storage_fails_its_run_once_and_is_restored_by_resubmitting(
    clients, s3, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        body = submit(clients["owner"]).json()
    source = Source.objects.get(sha256=body["source_sha256"])
    s3.delete_object(Bucket=s3.bucket, Key=source.key)
    node = make_node("n", [HW])
    claim = node.post(f"/api/agent/runs/{body['runs'][0]['id']}/claim/")
    assert claim.status_code == 409 and "missing from artifact storage" in claim.json()["detail"]
    run = Run.objects.get(pk=body["runs"][0]["id"])
    assert (run.state, run.failure_code, run.attempt) == ("failed", "SOURCE_MISSING", 0)
    with django_capture_on_commit_callbacks(execute=True):
        again = submit(clients["owner"]).json()
    assert s3.get_object(Bucket=s3.bucket, Key=source.key)["Body"].read().decode() == VECTOR_ADD
    claim = node.post(f"/api/agent/runs/{again['runs'][0]['id']}/claim/")
    assert claim.status_code == 200 and claim.json()["source"] == VECTOR_ADD
