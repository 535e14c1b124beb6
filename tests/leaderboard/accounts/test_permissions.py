"""Who may call what: every endpoint against owner, other user, node, other node of the class,
node of another class, admin and anonymous. Denied requests must change nothing."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from leaderboard.boards.models import Board
from leaderboard.nodes.models import Node
from leaderboard.runs.models import Result, Run
from leaderboard.submissions.models import Submission
from tests.leaderboard.lbkit import GPU, HW, SUITE, VECTOR_ADD, make_node, result_doc

ROLES = ("owner", "other", "node", "other_node", "class_node", "admin", "anonymous")
NODES = ("node", "other_node", "class_node")


def users(**codes: int) -> dict[str, int]:
    """Expected statuses: node tokens are not user credentials (401) unless said otherwise."""
    return {**{n: 401 for n in NODES}, **codes}


U = users(owner=200, other=200, admin=200, anonymous=401)
PUBLIC = users(owner=200, other=200, admin=200, anonymous=200)
OWNED = users(owner=200, other=404, admin=200, anonymous=404)
STAFF = users(owner=403, other=403, admin=200, anonymous=401)
ANYONE = {r: 200 for r in ROLES}
AGENT_ANY = {**{r: 401 for r in ROLES}, **{n: 200 for n in NODES}}


def agent(holder: int, other: int, other_class: int = 403) -> dict[str, int]:
    return {**AGENT_ANY, "node": holder, "other_node": other, "class_node": other_class}


# (method, path template, body, expected status by role); run in this order.
MATRIX = [
    ("get", "/api/", None, PUBLIC),
    ("get", "/api/schema/", None, PUBLIC),
    ("get", "/api/docs/", None, PUBLIC),
    ("get", "/api/problems/", None, PUBLIC),
    ("get", f"/api/problems/{SUITE}/vector_add/", None, PUBLIC),
    ("get", "/api/hardware/", None, PUBLIC),
    ("get", "/api/boards/", None, PUBLIC),
    ("get", f"/api/boards/{SUITE}/vector_add/{HW}/", None, PUBLIC),
    ("patch", f"/api/boards/{SUITE}/vector_add/{HW}/", {"sources_public": True}, STAFF),
    ("get", "/api/nodes/", None, PUBLIC),
    ("post", "/api/nodes/", {"name": "n-{role}", "hardware": [HW]}, {**STAFF, "admin": 201}),
    ("get", "/api/tokens/", None, U),
    ("delete", "/api/tokens/{spare}/", None, {**U, "owner": 204, "other": 404, "admin": 404}),
    ("post", "/api/tokens/", {"name": "t"}, {**U, "owner": 201, "other": 201, "admin": 201}),
    ("get", "/api/submissions/", None, U),
    (
        "post",
        "/api/submissions/",
        {"problem": "vector_add", "suite": SUITE, "hardware": [HW], "source": VECTOR_ADD},
        {**U, "owner": 201, "other": 201, "admin": 201},
    ),
    ("get", "/api/submissions/{sub}/", None, OWNED),
    ("get", "/api/submissions/{sub}/source/", None, OWNED),
    ("post", "/api/submissions/{sub}/hacked/", {"hacked": False}, STAFF),
    ("get", "/api/runs/", None, U),
    ("get", "/api/runs/{run}/", None, OWNED),
    ("post", "/api/agent/register/", {"hardware": [HW]}, {**AGENT_ANY, "class_node": 403}),
    ("post", "/api/agent/heartbeat/", {"current_runs": []}, AGENT_ANY),
    ("post", "/api/agent/enroll/", {"name": "x", "hardware": [HW]}, {r: 403 for r in ROLES}),
    ("get", f"/api/agent/suites/{SUITE}/?hash={{suite_hash}}", None, AGENT_ANY),
    ("post", "/api/agent/runs/{run}/claim/", None, agent(200, 409)),
    ("post", "/api/agent/runs/{run}/start/", {"attempt": 1}, agent(200, 403)),
    ("post", "/api/agent/runs/{run}/artifacts/", {"attempt": 1, "name": "logs"}, agent(200, 403)),
    (
        "put",
        "/api/agent/upload/{upload}/",
        b"log bytes",
        {r: 204 for r in ROLES},
    ),  # the signature is the credential, while the attempt lasts
    (
        "post",
        "/api/agent/runs/{run}/result/",
        {"attempt": 1, "result": "{doc}", "artifacts": ["logs"]},
        agent(200, 403),
    ),
    ("put", "/api/agent/upload/{upload}/", b"rewritten", {r: 409 for r in ROLES}),
    ("get", "/api/artifacts/{download}/", None, ANYONE),
    (
        "get",
        "/api/runs/{run}/artifacts/logs/",
        None,
        {**OWNED, "owner": 302, "admin": 302, "anonymous": 401},
    ),
]


@pytest.fixture
def world(clients, users, local_storage):
    owner_node, other_node = make_node("node", [HW]), make_node("other-node", [HW])
    sub = (
        clients["owner"]
        .post(
            "/api/submissions/",
            {
                "problem": "vector_add",
                "suite": SUITE,
                "hardware": [HW],
                "source": VECTOR_ADD,
                "mode": "leaderboard",
            },
            format="json",
        )
        .json()
    )
    run = Run.objects.get(pk=sub["runs"][0]["id"])
    owner_node.post(f"/api/agent/runs/{run.pk}/claim/")  # held by "node" from here on
    upload = owner_node.post(
        f"/api/agent/runs/{run.pk}/artifacts/", {"attempt": 1, "name": "logs"}, format="json"
    ).json()
    # the log's bytes, so that its download link serves something (an empty upload is a 404)
    path = upload["url"].replace("http://testserver", "")
    APIClient().put(path, b"log", content_type="text/plain; charset=utf-8")
    from leaderboard.accounts.services import api_token_create
    from leaderboard.artifacts.models import Artifact
    from leaderboard.artifacts.services import artifact_download_url

    spare, _ = api_token_create(user=users["owner"], name="spare")
    download = artifact_download_url(artifact=Artifact.objects.get(run=run), base_url="/")
    return {
        **clients,
        "node": owner_node,
        "other_node": other_node,
        "class_node": make_node("class-node", [GPU]),
        "sub": sub["id"],
        "run": run,
        "spare": spare.pk,
        "upload": upload["url"].rstrip("/").rsplit("/", 1)[-1],
        "download": download.rstrip("/").rsplit("/", 1)[-1],
        "suite_hash": run.submission.suite_hash,
    }


def counts():
    return (
        Submission.objects.count(),
        Run.objects.count(),
        Result.objects.count(),
        Node.objects.count(),
        Board.objects.filter(sources_public=True).count(),
        Submission.objects.filter(hacked=True).count(),
    )


def test_permission_matrix(world):
    run = world["run"]
    failures = []
    for method, template, body, expected in MATRIX:
        names = ("sub", "spare", "upload", "download", "suite_hash")
        path = template.format(run=run.pk, role="{role}", **{k: world[k] for k in names})
        order = ("other_node", "node") if "/agent/runs/" in path else ROLES
        for role in order + tuple(r for r in ROLES if r not in order):
            payload = body
            if isinstance(body, dict):
                payload = {
                    k: (v.format(role=role) if isinstance(v, str) and "{role}" in v else v)
                    for k, v in body.items()
                }
                if payload.get("result") == "{doc}":
                    run.refresh_from_db()
                    payload = {**payload, "result": result_doc(run)}
            before = counts()
            if isinstance(payload, bytes):
                r = world[role].generic(method.upper(), path, payload, "application/octet-stream")
            elif payload is not None:
                r = getattr(world[role], method)(path, payload, format="json")
            else:
                r = getattr(world[role], method)(path)
            if r.status_code != expected[role]:
                failures.append(
                    f"{method.upper()} {path} as {role}: {r.status_code}, expected {expected[role]}"
                )
            if r.status_code >= 400 and counts() != before:
                failures.append(f"{method.upper()} {path} as {role}: refused but changed data")
    assert not failures, "\n".join(failures)
    run.refresh_from_db()
    assert run.state == "done" and run.node.name == "node"


def test_text_that_may_quote_a_hidden_source_follows_the_source(clients, node, local_storage):
    """A public submission on a board whose sources are not public: others see its scores and
    verdicts, not tracebacks, guard details or logs (they may quote the source)."""
    body = (
        clients["owner"]
        .post(
            "/api/submissions/",
            {
                "problem": "vector_add",
                "suite": SUITE,
                "hardware": [HW],
                "source": VECTOR_ADD,
                "private": False,
            },
            format="json",
        )
        .json()
    )
    run = Run.objects.get(pk=body["runs"][0]["id"])
    secret_line = "return a + b  # SECRET-TRICK"
    doc = result_doc(run, verdict="RUNTIME_ERROR")
    doc["reasons"] = [{"code": "RUNTIME_ERROR", "detail": f"Traceback: line 2: {secret_line}"}]
    doc["workloads"][0]["errors"] = [{"code": "RUNTIME_ERROR", "detail": secret_line}]
    doc["guard"]["findings"] = [
        {"code": "CACHE", "severity": "flag", "detail": secret_line, "line": 2}
    ]
    doc["logs"] = {"worker_stderr": f"debug: {secret_line}"}
    claim = node.post(f"/api/agent/runs/{run.pk}/claim/").json()
    r = node.post(
        f"/api/agent/runs/{run.pk}/result/",
        {"attempt": claim["attempt"], "result": doc},
        format="json",
    )
    assert r.status_code == 200, r.content
    for reader in ("anonymous", "other"):
        seen = clients[reader].get(f"/api/runs/{run.pk}/")
        assert seen.status_code == 200 and "SECRET-TRICK" not in seen.content.decode()
        assert seen.json()["result"]["document"]["verdict"] == "RUNTIME_ERROR"
        page = clients[reader].get(f"/submissions/{body['id']}/")
        assert page.status_code == 200 and "SECRET-TRICK" not in page.content.decode()
        assert "RUNTIME_ERROR" in page.content.decode()
    for reader in ("owner", "admin"):
        assert "SECRET-TRICK" in clients[reader].get(f"/api/runs/{run.pk}/").content.decode()
