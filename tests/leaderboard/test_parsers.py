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
