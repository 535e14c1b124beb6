"""JSON that PostgreSQL cannot store is refused with a 400, never a 500 (a fuzzing finding)."""

import json

import pytest

from leaderboard.parsers import first_unstorable


def test_first_unstorable_finds_nul_and_lone_surrogates_anywhere():
    assert (
        first_unstorable({"a": [1, "ok", {"b": "x\x00y"}]})
        == "body.a[2].b contains a NUL character"
    )
    assert "unpaired surrogate" in first_unstorable(["\ud83d"])
    assert "key" in first_unstorable({"k\x00": 1})
    assert first_unstorable({"a": ["plain", 1.5, None, {"é": "ü😀"}]}) is None


@pytest.mark.django_db
@pytest.mark.parametrize("bad", ["\x00", "\ud9e1"])
def test_agent_heartbeat_with_unstorable_text_is_a_400(node, bad):
    body = json.dumps({"current_runs": [], "devices": [{"name": f"gpu{bad}"}]})
    response = node.post("/api/agent/heartbeat/", body, content_type="application/json")
    assert response.status_code == 400
    assert "NUL" in response.json()["detail"] or "surrogate" in response.json()["detail"]
    ok = node.post("/api/agent/heartbeat/", {"current_runs": []}, format="json")
    assert ok.status_code == 200


@pytest.mark.django_db
def test_form_field_with_nul_is_a_400(clients):
    response = clients["owner"].post(
        "/api/submissions/",
        {"problem": "vector_add", "hardware": "npu-sim-v1", "label": "a\x00b", "source": "x"},
    )
    assert response.status_code == 400
    assert "NUL" in response.json()["detail"]


@pytest.mark.django_db
def test_deeply_nested_json_is_a_400(node):
    for depth in (100, 100_000):  # under and over the C decoder's own recursion limit
        body = "[" * depth + "]" * depth
        r = node.post("/api/agent/heartbeat/", body, content_type="application/json")
        assert r.status_code == 400 and "nested deeper than 64 levels" in r.json()["detail"]


@pytest.mark.django_db
def test_bodies_are_bounded_before_they_are_read_whatever_their_type(clients, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.FARM_MAX_REQUEST_BYTES = 2**20
    owner = clients["owner"]
    big = {"problem": "vector_add", "source": "x" * 2**20}
    upload = {"problem": "vector_add", "file": SimpleUploadedFile("k.py", b"#" * 2**20)}
    for r in (
        owner.post("/api/submissions/", big, format="json"),
        owner.post("/api/submissions/", upload, format="multipart"),
    ):
        assert r.status_code == 413 and "over 1048576 bytes" in r.json()["detail"]
    chunked = owner.generic(
        "POST",
        "/api/submissions/",
        b"",
        content_type="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
    )
    assert chunked.status_code == 411 and "Content-Length" in chunked.json()["detail"]


@pytest.mark.django_db
def test_a_cursor_whose_position_is_not_an_id_is_a_404(clients):
    import base64

    cursor = base64.b64encode(b"p=abc").decode()
    for path in ("/api/runs/", "/api/submissions/"):
        r = clients["owner"].get(path, {"cursor": cursor})
        assert r.status_code == 404 and r.json()["detail"] == "Invalid cursor"
