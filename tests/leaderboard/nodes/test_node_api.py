"""A node's own part of the node-facing contract: enrolment, creation by an operator, registration,
the heartbeat, and a node that says it is unhealthy."""

from __future__ import annotations

from leaderboard.nodes.models import Node
from tests.leaderboard.lbkit import AMD, GPU, HW, queued_run


def test_register_and_heartbeat(node):
    r = node.post(
        "/api/agent/register/",
        {
            "hardware": [HW],
            "devices": [{"index": 0, "name": "npu-sim"}],
            "agent_version": "1.0",
            "hostname": "box",
        },
        format="json",
    )
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["queues"] == [f"hw.{HW}", f"hw.{HW}.node-{body['node']['id']}"]
    assert body["node"]["status"] == "online"
    assert body["heartbeat_interval_s"] >= 1
    r = node.post("/api/agent/register/", {"hardware": ["npu-sim-v2"]}, format="json")
    assert r.status_code == 400 and "unknown hardware class 'npu-sim-v2'" in r.json()["detail"]
    wider = node.post("/api/agent/register/", {"hardware": [HW, AMD]}, format="json")
    assert (
        wider.status_code == 403 and "an operator must allow amd-mi300x" in wider.json()["detail"]
    )
    assert sorted(h.name for h in node.node.hardware.all()) == [HW]
    hb = node.post("/api/agent/heartbeat/", {"current_runs": [12345]}, format="json")
    assert hb.status_code == 200
    assert hb.json()["abandon"] == [12345] and hb.json()["drain"] is False


def test_node_create_api_then_agent_uses_token(clients, local_storage):
    r = clients["admin"].post("/api/nodes/", {"name": "gpu-7", "hardware": [GPU]}, format="json")
    assert r.status_code == 201
    token = r.json()["token"]
    assert token.startswith("fn_")
    assert Node.objects.get(name="gpu-7").token_hash != token
    from rest_framework.test import APIClient

    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert agent.post("/api/agent/heartbeat/", {}, format="json").status_code == 200
    nodes = clients["anonymous"].get("/api/nodes/").json()
    assert [n["name"] for n in nodes] == ["gpu-7"]
    assert "token" not in nodes[0] and "token_hash" not in nodes[0]
    agent.post("/api/agent/heartbeat/", {"devices": [{"name": "H100", "x": "y"}]}, format="json")
    assert clients["anonymous"].get("/api/nodes/").json()[0]["devices"] == [{"index": 0}]
    assert clients["admin"].get("/api/nodes/").json()[0]["devices"][0]["name"] == "H100"
    flood = {"current_runs": list(range(1, 100_001)), "devices": [{"x": "y" * 70_000}]}
    r = agent.post("/api/agent/heartbeat/", flood, format="json")
    assert r.status_code == 400 and set(r.json()) == {"current_runs", "devices"}


def test_enrolment_with_the_shared_secret(clients, settings, db):
    settings.FARM_NODE_ENROLL_TOKEN = "s3cret-enrol"
    from rest_framework.test import APIClient

    agent = APIClient()
    body = {"name": "auto-1", "hardware": [HW]}
    assert agent.post("/api/agent/enroll/", body, format="json").status_code == 403
    r = agent.post("/api/agent/enroll/", body, format="json", HTTP_X_FARM_ENROLL="s3cret-enrol")
    assert r.status_code == 201 and r.json()["token"].startswith("fn_")
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"credentials": "3/min"},
    }
    codes = [agent.post("/api/agent/enroll/", body, format="json").status_code for _ in range(3)]
    assert codes[-1] == 429  # guesses of the secret are counted per address, wrong ones too


def test_an_unhealthy_node_says_why_and_claims_nothing(clients, node, other_node, local_storage):
    from django.test import Client

    run = queued_run(clients)
    sick = {
        "healthy": False,
        "problems": [{"code": "SELFTEST_FAILED", "detail": "vector_add: cc cannot link"}],
        "checks": 3,
    }
    hb = node.post("/api/agent/heartbeat/", {"current_runs": [], "health": sick}, format="json")
    assert hb.status_code == 200 and hb.json()["status"] == "unhealthy"
    listed = {n["name"]: n for n in clients["anonymous"].get("/api/nodes/").json()}
    assert listed["node-a"]["status"] == "unhealthy"
    assert listed["node-a"]["problems"] == sick["problems"]
    assert listed["node-b"]["problems"] == []
    refused = node.post(f"/api/agent/runs/{run.pk}/claim/")
    assert refused.status_code == 409 and "unhealthy" in refused.json()["detail"]
    page = Client().get("/nodes/").content.decode()
    assert "unhealthy" in page and "vector_add: cc cannot link" in page
    metrics = Client().get("/metrics").content.decode()
    assert 'farm_nodes_unhealthy{node="node-a",problem="SELFTEST_FAILED"} 1.0' in metrics
    well = {"healthy": True, "problems": [], "checks": 4}
    node.post("/api/agent/heartbeat/", {"current_runs": [], "health": well}, format="json")
    assert node.post(f"/api/agent/runs/{run.pk}/claim/").status_code == 200
