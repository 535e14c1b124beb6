"""Writes on runs: creation and dispatch, claims, failures, the reaper and the resends.
Recording a result is judgement, one layer up (leaderboard.judging.services).

Every state change is a conditional UPDATE (or runs under SELECT ... FOR UPDATE), so that a
second claim, a retried post or a late post from a node presumed dead never counts twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from leaderboard import metrics
from leaderboard.artifacts.services import source_text
from leaderboard.artifacts.store import ArtifactStoreError
from leaderboard.celery import app
from leaderboard.nodes.models import Node
from leaderboard.nodes.reception import reception_dead_cutoff
from leaderboard.problems.models import HardwareClass
from leaderboard.runs import routing
from leaderboard.runs.models import CANCELLED, LOST, Run
from leaderboard.runs.signals import run_failed

log = logging.getLogger(__name__)
AGENT_TASK = "farm.agent.evaluate_run"
SOURCE_MISSING = "SOURCE_MISSING"


class RunError(Exception):
    """Base: the message says what happened and what the caller should do."""


class RunNotFound(RunError):
    pass


class RunForbidden(RunError):
    """The node does not hold this run (never claimed it, or it was taken back)."""


class RunConflict(RunError):
    """The run is not in a state that allows this (already claimed, finished, stale attempt)."""


class ResultInvalid(RunError):
    """The posted document is malformed or is not about this run."""


@dataclass(frozen=True)
class Recorded:
    run: Run
    duplicate: bool


def runs_create(*, submission, hardware: list[HardwareClass]) -> list[Run]:
    """One queued run per hardware class; they are sent to the broker after the commit."""
    runs = Run.objects.bulk_create(
        [
            Run(
                submission=submission,
                user_id=submission.user_id,
                problem_id=submission.problem_id,
                hardware=hw,
                mode=submission.mode,
            )
            for hw in hardware
        ]
    )
    ids = [r.pk for r in runs]
    transaction.on_commit(lambda: runs_send(run_ids=ids))
    return runs


def runs_send(*, run_ids: list[int]) -> int:
    """Hand queued runs to the broker (task `farm.agent.evaluate_run` on queue `hw.<class>`; an
    audit run goes to the queue of the node chosen for it, see leaderboard.runs.routing).

    A run that cannot be sent stays queued with no `sent_at`; the periodic resend finds it.
    """
    sent = 0
    rows = Run.objects.filter(id__in=run_ids, state=Run.State.QUEUED).only(
        "id", "hardware_id", "mode", "audit_of_id", "fault_nodes"
    )
    for run in rows:
        run_id, hardware = run.pk, run.hardware_id
        queue = routing.run_queue(run)
        if queue is None:
            log.info("audit run %s waits: no other online %s node", run_id, hardware)
            continue
        soft, hard = settings.FARM_TIME_LIMITS_S.get(run.mode, (None, None))
        try:
            app.send_task(
                AGENT_TASK,
                args=[run_id],
                queue=queue,
                soft_time_limit=soft,
                time_limit=hard,
            )
        except Exception as exc:  # broker down: keep the run queued, resend later
            log.warning("run %s not sent to %s yet: %s", run_id, queue, exc)
            continue
        Run.objects.filter(id=run_id, state=Run.State.QUEUED).update(sent_at=timezone.now())
        sent += 1
    return sent


def runs_resend_unsent(*, older_than_s: int = 30) -> int:
    cutoff = timezone.now() - timedelta(seconds=older_than_s)
    ids = list(
        Run.objects.filter(
            state=Run.State.QUEUED, sent_at__isnull=True, created_at__lt=cutoff
        ).values_list("id", flat=True)[:1000]
    )
    return runs_send(run_ids=ids)


def run_claim(*, run_id: int, node: Node, device_index: int | None = None) -> Run:
    """Claim a queued run for `node` (its GPU `device_index`, when the node names one): exactly
    one node wins. A repeated claim by the holder returns the run again (a retried request);
    everyone else gets RunConflict."""
    if node.draining:
        raise RunConflict("this node is draining: it may not claim new runs; requeue the job")
    if not node.healthy:
        raise RunConflict(
            "this node reported itself unhealthy (its self-test failed): it may not claim runs "
            "until a self-test passes; drop the job"
        )
    allowed = node.allowed_hardware.values("name")
    served = list(node.hardware.filter(name__in=allowed).values_list("name", flat=True))
    # The audit check stays out of the UPDATE: a join there would turn it into a subquery, whose
    # rows PostgreSQL does not re-check after waiting for a concurrent claim's row lock.
    refused = routing.audit_claim_refusal(run_id, node, device_index) or routing.fault_refusal(
        run_id, node
    )
    won = (not refused) and Run.objects.filter(
        id=run_id, state=Run.State.QUEUED, hardware_id__in=served
    ).update(
        state=Run.State.CLAIMED,
        node=node,
        attempt_node=node,
        device_index=device_index,
        attempt=F("attempt") + 1,
        claimed_at=timezone.now(),
    )
    run = Run.objects.filter(id=run_id).first()
    if run is None:
        raise RunNotFound(f"run {run_id} does not exist; drop the job")
    if won or (run.node_id == node.pk and run.state in Run.ACTIVE):
        return run
    if refused:
        raise RunConflict(f"{refused}; drop the job")
    if run.state == Run.State.FAILED and run.failure_code == CANCELLED:
        raise RunConflict(f"run {run_id} was cancelled; drop the job")
    if run.hardware_id not in served:
        raise RunForbidden(
            f"run {run_id} is for {run.hardware_id}; "
            f"this node serves {', '.join(served) or 'nothing'}"
        )
    raise RunConflict(
        f"run {run_id} is {run.state} (attempt {run.attempt}) elsewhere; drop the job"
    )


def run_source_for_claim(*, run_id: int, node: Node) -> str | None:
    """The source text a claim of the run hands out, read BEFORE the claim, so that storage
    that cannot deliver it (ArtifactStoreError, a 503) costs the run no attempt and no node
    the blame. None when the run is not claimable by anyone now (run_claim says why).

    A source missing from storage is permanent: the run fails as SOURCE_MISSING without an
    attempt spent, the source is marked for repair (re-submitting the same text stores it
    again), and RunConflict tells the node to drop the job."""
    run = Run.objects.select_related("submission__source").filter(id=run_id).first()
    if run is None:
        raise RunNotFound(f"run {run_id} does not exist; drop the job")
    if run.state != Run.State.QUEUED and not (run.node_id == node.pk and run.state in Run.ACTIVE):
        return None
    source = run.submission.source
    try:
        return source_text(source=source)
    except ArtifactStoreError as exc:
        if not exc.missing:
            raise
    detail = (
        f"source {source.sha256[:12]} is missing from artifact storage; submit the same text "
        "again to restore it"
    )
    with transaction.atomic():
        locked = run_get(run_id, lock=True)
        if locked.state == Run.State.QUEUED:
            _release(locked, code=SOURCE_MISSING, detail=detail, retry=False)
        source.mark_missing()
    raise RunConflict(f"run {run_id} failed: {detail}; drop the job")


def run_start(*, run_id: int, node: Node, attempt: int) -> Run:
    """claimed -> running for the holder; repeating it is harmless."""
    Run.objects.filter(id=run_id, node=node, attempt=attempt, state=Run.State.CLAIMED).update(
        state=Run.State.RUNNING, started_at=timezone.now()
    )
    run = run_get(run_id)
    check_holder(run, node, attempt)
    if run.state != Run.State.RUNNING:
        raise RunConflict(f"run {run_id} is {run.state}; it cannot start")
    return run


def run_get(run_id: int, *, lock: bool = False) -> Run:
    qs = Run.objects.select_for_update() if lock else Run.objects
    run = qs.filter(id=run_id).first()
    if run is None:
        raise RunNotFound(f"run {run_id} does not exist")
    return run


def _check_attempt_holder(run: Run, node: Node, attempt: int) -> None:
    """The node claimed `attempt` of the run (it may have been taken back since): checked
    before anything about the run is answered, so that no node learns of runs it never held."""
    if run.attempt_node_id != node.pk or run.attempt != attempt:
        if attempt < run.attempt:
            raise RunForbidden(
                f"run {run.pk} is at attempt {run.attempt}: attempt {attempt} is over (taken "
                "back, e.g. after its lease expired); nothing was recorded, drop the job"
            )
        raise RunForbidden(
            f"run {run.pk} (attempt {attempt}) was never held by this node; nothing was recorded"
        )


def run_check_upload(*, run_id: int, node: Node, attempt: int) -> Run:
    """The run, when the node may upload artifacts of `attempt` now: it holds the attempt and
    no result is recorded yet. Raises RunForbidden / RunConflict otherwise: an upload after the
    result could rewrite what was recorded."""
    run = run_get(run_id)
    check_holder(run, node, attempt)
    if run.state not in Run.ACTIVE:
        raise RunConflict(f"run {run_id} is {run.state}; its artifacts can no longer change")
    return run


def lease_expired(run: Run, node: Node, attempt: int) -> bool:
    """`node` held `attempt`, the latest, and it was taken back as LOST (not claimed since)."""
    taken_back = run.state not in Run.ACTIVE and run.failure_code == LOST
    return taken_back and run.attempt_node_id == node.pk and run.attempt == attempt


def cancelled_for(run: Run, node: Node, attempt: int) -> bool:
    """`node` held `attempt`, the latest, when the run was cancelled."""
    cancelled = run.state == Run.State.FAILED and run.failure_code == CANCELLED
    return cancelled and run.attempt_node_id == node.pk and run.attempt == attempt


def check_holder(run: Run, node: Node, attempt: int) -> None:
    if cancelled_for(run, node, attempt):
        raise RunConflict(
            f"run {run.pk} was cancelled while this node held attempt {attempt}; nothing was "
            "recorded, stop it and drop the job"
        )
    if lease_expired(run, node, attempt):
        raise RunConflict(
            f"run {run.pk}: this node's lease on attempt {attempt} expired (no heartbeat for "
            f"{settings.FARM_NODE_DEAD_AFTER_S} s while the server was receiving) and the run "
            "was queued again; nothing was recorded, drop the job"
        )
    if run.node_id != node.pk:
        raise RunForbidden(
            f"run {run.pk} is not held by this node (it was never claimed by it, or it was "
            "taken back after missed heartbeats); nothing was recorded"
        )
    if run.attempt != attempt:
        raise RunConflict(
            f"run {run.pk} is at attempt {run.attempt}, this report is for attempt {attempt}; "
            "nothing was recorded"
        )


def run_failure_record(
    *,
    run_id: int,
    node: Node,
    attempt: int,
    code: str,
    detail: str,
    retryable: bool,
    node_fault: bool | None = None,
) -> Recorded:
    """A node could not evaluate the run (sandbox crash, a harness that failed, ...): requeue it
    when `retryable`, else fail it. A retryable failure is the node's fault unless the node says
    otherwise (`node_fault` False): it costs the submission no attempt and is retried on another
    node (see _release). Repeating the same report is harmless."""
    with transaction.atomic():
        run = run_get(run_id, lock=True)
        _check_attempt_holder(run, node, attempt)
        if (
            run.attempt == attempt
            and run.failure_code == code
            and run.state in (Run.State.QUEUED, Run.State.FAILED)
        ):
            return Recorded(run=run, duplicate=True)
        check_holder(run, node, attempt)
        if run.state not in Run.ACTIVE:
            raise RunConflict(f"run {run_id} is {run.state}; the failure was not recorded")
        fault = retryable if node_fault is None else node_fault and retryable
        _release(run, code=code, detail=detail, retry=retryable, fault=fault, avoid=fault)
    return Recorded(run=run, duplicate=False)


def _release(
    run: Run, *, code: str, detail: str, retry: bool, fault: bool = False, avoid: bool = False
) -> None:
    """Requeue or fail an active run; the caller holds the lock. A `fault` (of the node or its
    host) is not charged to the submission: it counts in `node_faults`, bounded by
    FARM_MAX_NODE_FAULTS; other retries count against FARM_MAX_ATTEMPTS. `avoid`: the next
    attempt goes to another node of the class when one is online (leaderboard.runs.routing)."""
    run.failure_code, run.failure_detail = code[:50], detail
    if fault:
        run.node_faults += 1
        if avoid and run.attempt_node_id and run.attempt_node_id not in run.fault_nodes:
            run.fault_nodes = [*run.fault_nodes, run.attempt_node_id]
        failed = not retry or run.node_faults >= settings.FARM_MAX_NODE_FAULTS
        spent = f"{run.node_faults} faults of the nodes"
    else:
        failed = not (retry and run.charged_attempts < settings.FARM_MAX_ATTEMPTS)
        spent = f"{run.charged_attempts} attempts"
    if not failed:
        run.state, run.node, run.sent_at = Run.State.QUEUED, None, None
        run_id = run.pk
        transaction.on_commit(lambda: runs_send(run_ids=[run_id]))
    else:
        run.state, run.finished_at = Run.State.FAILED, timezone.now()
        if retry:
            run.failure_detail = f"{detail} (gave up after {spent})"
        transaction.on_commit(lambda: metrics.run_finished(run.hardware_id, code, None))
    run.save(
        update_fields=[
            "state",
            "node",
            "sent_at",
            "finished_at",
            "failure_code",
            "failure_detail",
            "node_faults",
            "fault_nodes",
        ]
    )
    if failed:
        run_failed.send(sender=Run, run=run, reason=f"{run.failure_code}: {run.failure_detail}")


def run_fail(run: Run, *, code: str, detail: str) -> None:
    """Fail an unfinished run for good, without an attempt charged; the caller holds the lock.
    Its node (if any) keeps its name on the run, so that its later posts are answered 409."""
    run.state, run.finished_at = Run.State.FAILED, timezone.now()
    run.failure_code, run.failure_detail = code[:50], detail
    run.save(update_fields=["state", "finished_at", "failure_code", "failure_detail"])
    hardware = run.hardware_id
    transaction.on_commit(lambda: metrics.run_finished(hardware, code, None))
    run_failed.send(sender=Run, run=run, reason=f"{code}: {detail}")


def run_requeue_farm_outcome(*, run: Run, verdict: str, detail: str) -> bool:
    """An INCONCLUSIVE or NODE_FAULT result is the farm's, not the kernel's: measure again,
    uncharged (NODE_FAULT on another node), while FARM_MAX_NODE_FAULTS allows; True when the
    run was queued again (the caller holds the lock), False when the result must be kept."""
    if run.node_faults + 1 >= settings.FARM_MAX_NODE_FAULTS:
        return False
    avoid = verdict == "NODE_FAULT"
    _release(run, code=verdict, detail=detail, retry=True, fault=True, avoid=avoid)
    return True


def run_mark_lost(*, run_id: int, node_id: int | None) -> bool:
    """The run's node stopped heartbeating: mark it lost, then requeue or fail it."""
    with transaction.atomic():
        lost = Run.objects.filter(id=run_id, node_id=node_id, state__in=Run.ACTIVE).update(
            state=Run.State.LOST
        )
        if not lost:
            return False
        run = run_get(run_id, lock=True)
        detail = "the node stopped heartbeating during the run (its lease expired)"
        _release(run, code=LOST, detail=detail, retry=True, fault=True, avoid=True)
    return True


def runs_held(*, node: Node, run_ids: list[int]) -> list[int]:
    """The ids among `run_ids` that `node` holds. A run taken back from it (its lease expired:
    no heartbeat for a whole dead-node window while the server was receiving) is not among
    them, even while no other node has claimed it: what a node measured while it could not
    heartbeat (frozen, overloaded, cut off) is not trusted, and the run is measured again."""
    return list(
        Run.objects.filter(id__in=run_ids, node=node, state__in=Run.ACTIVE).values_list(
            "id", flat=True
        )
    )


def runs_reap() -> int:
    """Mark runs of nodes presumed dead as lost (and requeue them); returns how many.

    Nothing is presumed while the server itself could not hear heartbeats for a whole window
    (leaderboard.nodes.reception): an outage of the web tier is not the nodes' failure."""
    cutoff = reception_dead_cutoff()
    if cutoff is None:
        return 0
    stale = (
        Run.objects.filter(state__in=Run.ACTIVE)
        .filter(
            Q(node__isnull=True)
            | Q(node__last_heartbeat__isnull=True)
            | Q(node__last_heartbeat__lt=cutoff)
        )
        .filter(claimed_at__lt=cutoff)
    )
    return sum(run_mark_lost(run_id=i, node_id=n) for i, n in stale.values_list("id", "node_id"))
