"""The agent's side of Celery: one worker process per slot, no Django.

The server sends `farm.agent.evaluate_run(run_id)` by name to queue `hw.<class>`. Each slot runs
`python -m agents.worker` (started by the agent, see agents.slots), a Celery worker with one
prefork child that consumes only its slot's queue: acks late (a job is acknowledged only when it
ended), rejected back to the queue when the child dies, prefetch 1, and the soft/hard time
limits the server put on the message (per mode). The child imports torch and the harness when it
starts, so a job finds a warm process.

The slot's description and the node token come from the environment the agent sets
(agents.config.SlotSettings, FARM_NODE_TOKEN); everything else from agents.config.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import time
from pathlib import Path
from typing import Any

from celery import Celery
from celery.exceptions import Reject, SoftTimeLimitExceeded
from celery.signals import worker_process_init

from agents.config import load_config, load_slot_settings
from agents.errors import RetryableError

log = logging.getLogger(__name__)
TASK_NAME = "farm.agent.evaluate_run"
REQUEUE_DELAY_S = 2.0  # wait before putting back a job whose claim could not reach the server
CHILD_START_TIMEOUT_S = 120.0  # for a slot child to import torch and the harness


def make_app(broker_url: str) -> Celery:
    app = Celery("farm-agent", broker=broker_url)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,  # keep trying while the broker restarts
        broker_connection_timeout=4.0,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        task_create_missing_queues=True,
        # A child imports torch and the harness before it reports up (seconds on a busy
        # machine; Celery's default of 4 s killed every replacement child in a loop)
        worker_proc_alive_timeout=CHILD_START_TIMEOUT_S,
    )
    app.task(name=TASK_NAME, bind=True)(evaluate_run)
    return app


_runner: Any = None


def runner() -> Any:
    """This process's JobRunner (one per slot child, built on first use)."""
    global _runner
    if _runner is None:
        from agents.client import ServerClient
        from agents.devices import Slot
        from agents.job import JobRunner

        cfg = load_config()
        slot = Slot(**load_slot_settings().slot)
        client = ServerClient(
            cfg.server_url,
            cfg.node_token,
            timeout_s=cfg.http_timeout_s,
            attempts=cfg.http_attempts,
            backoff_s=cfg.http_backoff_s,
        )
        _runner = JobRunner(cfg, client, slot)
        _runner.timeout_errors = (SoftTimeLimitExceeded,)
    return _runner


def evaluate_run(task: Any, run_id: int, **_extra: Any) -> str:
    """Run one job; returns its outcome. A claim that cannot reach the server puts the message
    back (Reject with requeue) so the run is not lost."""
    from agents import metrics

    job_runner = runner()
    hardware = job_runner.slot.hardware
    metrics.BUSY_SLOTS.labels(hardware).inc()
    try:
        outcome = job_runner.run(int(run_id))
    except RetryableError as exc:
        log.warning("run %s: %s; back to the queue", run_id, exc)
        metrics.JOBS.labels(hardware, "requeued").inc()
        time.sleep(REQUEUE_DELAY_S)
        raise Reject(str(exc), requeue=True) from None
    finally:
        metrics.BUSY_SLOTS.labels(hardware).dec()
    metrics.JOBS.labels(hardware, outcome.status).inc()
    if outcome.timings.queue_wait is not None:
        metrics.QUEUE_WAIT_SECONDS.labels(hardware).observe(outcome.timings.queue_wait)
    if outcome.timings.evaluate:
        mode = outcome.mode or "any"
        metrics.EVALUATION_SECONDS.labels(hardware, mode).observe(outcome.timings.evaluate)
    verdict, seconds = outcome.verdict or "", outcome.timings.total
    log.info("run %s: %s %s (%.2f s)", run_id, outcome.status, verdict, seconds)
    _record(outcome, job_runner.cfg.journal)
    return outcome.status


def _record(outcome: Any, path: Path | None) -> None:
    """Append the outcome and its timings to `path` (FARM_AGENT_JOURNAL, JSON lines), if any."""
    if path is None:
        return
    from agents.job import outcome_dict

    with open(path, "a") as f:
        f.write(json.dumps({"time": time.time(), **outcome_dict(outcome)}) + "\n")


@worker_process_init.connect
def _warm(**_: Any) -> None:
    """In a new slot child: release what a dead predecessor left, listen for the agent's stop
    requests, and import torch and the harness before the first job arrives."""
    from agents.job import default_evaluate  # noqa: F401
    from farm.harness import supervisor  # noqa: F401

    job_runner = runner()
    signal.signal(signal.SIGUSR2, lambda _sig, _frame: job_runner.stop_if_abandoned())
    try:
        job_runner.release_stale()
    except Exception as exc:  # never keep the slot from starting; the agent's beat retries
        log.warning("could not release the previous process's run: %s", exc)


def main(argv: list[str] | None = None) -> int:
    """Start this slot's Celery worker (the agent runs this; see agents.slots)."""
    from agents.devices import Slot
    from agents.slots import die_with_parent

    die_with_parent()
    settings = load_slot_settings()
    slot = Slot(**settings.slot)
    cfg = load_config()
    app = make_app(cfg.broker_url)
    args = [
        "worker",
        "--queues",
        ",".join(slot.queues(settings.node_id)),
        "--pool",
        "prefork",
        "--concurrency",
        "1",
        "--hostname",
        f"slot{slot.number}-{slot.hardware}@{cfg.node_name}",
        "--without-gossip",
        "--without-mingle",
        "--loglevel",
        cfg.log_level,
        *(argv or []),
    ]
    app.worker_main(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
