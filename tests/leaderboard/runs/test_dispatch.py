"""Runs reach the broker after the commit, by task name, on their hardware queue."""

from __future__ import annotations

from unittest import mock

from leaderboard.celery import app
from leaderboard.runs.models import Run
from leaderboard.runs.services import AGENT_TASK, runs_resend_unsent
from tests.leaderboard.lbkit import GPU, HW, submit


def drain(queue: str) -> list[tuple[str, list]]:
    got = []
    with app.connection_for_read() as conn:
        q = conn.SimpleQueue(queue)
        while True:
            try:
                msg = q.get(timeout=0.2)
            except q.Empty:
                break
            got.append((msg.headers["task"], msg.decode()[0]))
            msg.ack()
        q.close()
    return got


def test_runs_are_sent_by_name_to_their_hardware_queue(
    clients, local_storage, django_capture_on_commit_callbacks
):
    drain(f"hw.{HW}"), drain(f"hw.{GPU}")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        body = submit(clients["owner"], hardware=[HW, GPU]).json()
    assert drain(f"hw.{HW}") == []  # nothing before the commit
    for callback in callbacks:
        callback()
    ids = {r["hardware"]: r["id"] for r in body["runs"]}
    assert drain(f"hw.{HW}") == [(AGENT_TASK, [ids[HW]])]
    assert drain(f"hw.{GPU}") == [(AGENT_TASK, [ids[GPU]])]
    assert all(run.sent_at for run in Run.objects.all())


def test_broker_down_keeps_the_run_queued_and_resends_later(
    clients, local_storage, django_capture_on_commit_callbacks
):
    drain(f"hw.{HW}")
    down = mock.patch.object(app, "send_task", side_effect=ConnectionError("broker down"))
    with down, django_capture_on_commit_callbacks(execute=True):
        r = submit(clients["owner"])
    assert r.status_code == 201
    run = Run.objects.get()
    assert run.state == "queued" and run.sent_at is None
    assert runs_resend_unsent(older_than_s=0) == 1
    assert drain(f"hw.{HW}") == [(AGENT_TASK, [run.pk])]


def test_no_lost_work_settings():
    conf = app.conf
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
