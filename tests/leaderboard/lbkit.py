"""Helpers of the leaderboard tests (constants, clients, result documents)."""

from __future__ import annotations

import io
import json
import socket
import time

from rest_framework.test import APIClient

SUITE = "lbtest-v1"
HW = "npu-sim-v1"
GPU = "nvidia-h100"
AMD = "amd-mi300x"
VECTOR_ADD = "def kernel(a, b):\n    return a + b\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def user_client(user) -> APIClient:
    from leaderboard.accounts.services import api_token_create

    _, key = api_token_create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    client.token = key  # type: ignore[attr-defined]
    return client


def make_node(name: str, hardware: list[str]):
    from leaderboard.nodes.services import node_create, node_heartbeat

    node, key = node_create(name=name, hardware=hardware)
    node_heartbeat(node=node, current_runs=[], devices=None)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    client.node = node  # type: ignore[attr-defined]
    client.token = key  # type: ignore[attr-defined]
    return client


def server_hearing_since(since) -> None:
    """The web tier has answered requests without a pause since `since` (a datetime)."""
    from django.utils import timezone

    from leaderboard.nodes.models import Reception

    Reception.objects.update_or_create(pk=1, defaults={"since": since, "last": timezone.now()})


def submit(client, **fields):
    body = {
        "problem": "vector_add",
        "suite": SUITE,
        "hardware": [HW],
        "source": VECTOR_ADD,
        "mode": "leaderboard",
        **fields,
    }
    return client.post("/api/submissions/", body, format="json")


def queued_run(clients, **fields):
    """The run of a fresh submission of the owner's (one hardware class unless `hardware`)."""
    from leaderboard.runs.models import Run

    body = submit(clients["owner"], **fields).json()
    return Run.objects.get(pk=body["runs"][0]["id"])


def command_answer(*args: str) -> dict:
    """The one JSON line that a management command prints, read."""
    from django.core.management import call_command

    out = io.StringIO()
    call_command(*args, stdout=out)
    (line,) = out.getvalue().splitlines()  # one line, for the caller to parse
    return json.loads(line)


def result_doc(
    run,
    *,
    verdict="PASSED",
    time_ms=5.0,
    score=0.5,
    secret=True,
    ci=0.01,
    suite_hash=None,
    workloads=("big", "small"),
):
    """A valid farm.result/1 document for `run` (a Run), with secret-seed copies of the
    workloads when `secret`."""
    from leaderboard.problems.models import Suite

    status = (
        "PASSED"
        if verdict == "PASSED"
        else verdict
        if verdict != "COMPILE_ERROR"
        else "RUNTIME_ERROR"
    )
    rows = []
    for wid in workloads:
        for is_secret in (False, True) if secret else (False,):
            t = time_ms
            rows.append(
                {
                    "id": wid,
                    "secret": is_secret,
                    "status": status,
                    "time_ms": t,
                    "sol_ms": 0.001,
                    "baseline_ms": {"eager": t * 2, "compile": t * 1.5},
                    "sol_score": score,
                    "timing": {"ci95_low_ms": t * (1 - ci), "ci95_high_ms": t * (1 + ci)},
                }
            )
    return {
        "schema": "farm.result/1",
        "suite": {
            "name": run.submission.suite_id,
            "hash": suite_hash or Suite.objects.get(name=run.submission.suite_id).hash,
        },
        "problem": run.problem.name,
        "hardware": run.hardware_id,
        "mode": run.mode,
        "verdict": verdict,
        "reasons": [],
        "score": {"sol_score": score},
        "workloads": rows,
        "environment": {"device": "test"},
        "guard": {"findings": []},
    }


def finish(node_client, run, *, auditor=None, artifacts=(), device_index=None, **doc_kwargs):
    """Claim (on the node's GPU `device_index`, if given), start and report `run` through the
    agent API; returns the result response. With `auditor` (another node's client), an audit
    the result started is run there too, with the same document."""
    body = {} if device_index is None else {"device_index": device_index}
    claim = node_client.post(f"/api/agent/runs/{run.pk}/claim/", body, format="json")
    assert claim.status_code == 200, claim.content
    attempt = claim.json()["attempt"]
    node_client.post(f"/api/agent/runs/{run.pk}/start/", {"attempt": attempt}, format="json")
    run.refresh_from_db()
    body = {"attempt": attempt, "result": result_doc(run, **doc_kwargs), "artifacts": artifacts}
    r = node_client.post(f"/api/agent/runs/{run.pk}/result/", body, format="json")
    audit = type(run).objects.filter(audit_of=run).first()
    if auditor is not None and audit is not None:
        assert finish(auditor, audit, **doc_kwargs).status_code == 200
    return r


def race(call, contenders: list, lost: type[Exception]) -> list:
    """Start `call(c)` for every contender at once (one thread and DB connection each);
    return the contenders whose call did not raise `lost`."""
    import threading

    from django.db import connection

    barrier = threading.Barrier(len(contenders))
    winners = []

    def attempt(c) -> None:
        barrier.wait()
        try:
            call(c)
            winners.append(c)
        except lost:
            pass
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(c,)) for c in contenders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return winners
