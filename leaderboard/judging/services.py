"""Recording a node's result: the server's judgement (leaderboard.judging.judge), the stored
result and its workload rows, the run's outcome, its audit (leaderboard.judging.audits) and its
board entry, in one transaction."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import transaction
from django.utils import timezone

from farm.result import Result, ResultSchemaError, Verdict
from leaderboard import metrics
from leaderboard.artifacts.services import artifacts_mark_reported
from leaderboard.boards.services import board_entry_refresh_for_run
from leaderboard.judging.audits import audit_conclude, audit_set, audit_start, audit_wanted
from leaderboard.judging.judge import Judgement, judge
from leaderboard.nodes.models import Node
from leaderboard.runs.models import Result as StoredResult
from leaderboard.runs.models import Run, WorkloadResult
from leaderboard.runs.services import (
    Recorded,
    ResultInvalid,
    RunConflict,
    check_holder,
    run_get,
    run_requeue_farm_outcome,
)

# Results that say the host or the node spoiled the evaluation: measured again, uncharged
REMEASURED = frozenset({Verdict.INCONCLUSIVE.value, Verdict.NODE_FAULT.value})


def document_digest(document: dict[str, Any]) -> str:
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), allow_nan=False)
    if "\\u0000" in canonical:
        raise ValueError("strings must not contain NUL characters (\\u0000)")
    return hashlib.sha256(canonical.encode()).hexdigest()


def result_record(
    *, run_id: int, node: Node, attempt: int, document: Any, artifacts: list[str] | None = None
) -> Recorded:
    """Store a node's result once. The same post again returns the stored one (duplicate).

    An INCONCLUSIVE or NODE_FAULT result (after the server's checks) is not stored while the run
    may be measured again: the run is queued again, uncharged (run_requeue_farm_outcome), and
    the document's first reason becomes the run's failure detail."""
    try:
        result = Result.from_json(document)
        digest = document_digest(document)
    except (ResultSchemaError, ValueError) as exc:
        raise ResultInvalid(f"result document: {exc}") from None
    with transaction.atomic():
        run = run_get(run_id, lock=True)
        previous = StoredResult.objects.filter(run=run).first()
        if previous is not None and previous.node_id == node.pk and previous.attempt == attempt:
            if previous.digest == digest:
                return Recorded(run=run, duplicate=True)
            raise RunConflict(f"run {run_id} already has a different result for attempt {attempt}")
        if _requeued_before(run, node, attempt, result):
            return Recorded(run=run, duplicate=True)
        check_holder(run, node, attempt)
        if run.state not in Run.ACTIVE:
            raise RunConflict(f"run {run_id} is {run.state}; the result was not recorded")
        _check_about(run, result)
        j = _judge(run, result)
        if j.verdict in REMEASURED and run_requeue_farm_outcome(
            run=run, verdict=j.verdict, detail=_first_reason(result, j.verdict)
        ):
            return Recorded(run=run, duplicate=False)
        if j.verdict in REMEASURED:  # kept: the faults allowed are spent; still not charged
            run.node_faults += 1
        _store(run, node, attempt, document, result, digest, j)
        if artifacts:
            artifacts_mark_reported(run=run, names=artifacts)
    return Recorded(run=run, duplicate=False)


def _check_about(run: Run, result: Result) -> None:
    expected = {"problem": run.problem.name, "hardware": run.hardware_id, "mode": run.mode}
    found = {"problem": result.problem, "hardware": result.hardware, "mode": result.mode.value}
    for key, value in expected.items():
        if found[key] != value:
            raise ResultInvalid(f"result.{key}: is {found[key]!r}, but run {run.pk} is {value!r}")


def _requeued_before(run: Run, node: Node, attempt: int, result: Result) -> bool:
    """This post repeats one that queued the run again (an INCONCLUSIVE or NODE_FAULT result
    of this node's attempt): nothing changes."""
    return (
        run.attempt_node_id == node.pk
        and run.attempt == attempt
        and run.state == Run.State.QUEUED
        and run.failure_code == result.verdict.value
    )


def _first_reason(result: Result, verdict: str) -> str:
    reasons = [f"{r.code}: {r.detail}" for r in result.reasons]
    head = reasons[0] if reasons else "no reason given"
    return f"{verdict} on this attempt ({head}); measured again, not charged"


def _judge(run: Run, result: Result) -> Judgement:
    submission = run.submission
    return judge(
        result=result,
        suite=submission.suite_id,
        suite_hash=submission.suite_hash,
        problem=run.problem.name,
        hardware=run.hardware_id,
    )


def _store(
    run: Run,
    node: Node,
    attempt: int,
    document: dict[str, Any],
    result: Result,
    digest: str,
    j: Judgement,
) -> None:
    """Store `document` as posted (`result` is its typed reading) with the server's judgement."""
    score = result.sol_score if j.verdict == "PASSED" else None
    stored = StoredResult.objects.create(
        run=run,
        node=node,
        attempt=attempt,
        document=document,
        digest=digest,
        verdict=j.verdict,
        sol_score=score,
        server_reasons=j.reasons,
        secret_passed=_secret_passed(j.rows),
    )
    WorkloadResult.objects.bulk_create([WorkloadResult(result=stored, **row) for row in j.rows])
    now = timezone.now()
    run.state = Run.State.DONE if j.suite_ok else Run.State.FAILED
    run.verdict, run.sol_score, run.finished_at = j.verdict, score, now
    run.failure_code = "" if j.suite_ok else "SUITE_HASH_MISMATCH"
    run.failure_detail = "" if j.suite_ok else j.reasons[0]["detail"]
    run.save(
        update_fields=[
            "state",
            "node_faults",
            "verdict",
            "sol_score",
            "finished_at",
            "failure_code",
            "failure_detail",
        ]
    )
    if run.audit_of_id:
        audit_conclude(run)  # the audit run shares its board and user with `run`
    elif j.held:
        audit_set(run, Run.Audit.HELD, j.held)  # off its board until an operator decides
    elif audit_wanted(run):
        audit_start(run)
    board_entry_refresh_for_run(run=run)
    latency = (now - run.created_at).total_seconds()
    transaction.on_commit(lambda: metrics.run_finished(run.hardware_id, j.verdict, latency))


def _secret_passed(rows: list[dict[str, Any]]) -> bool:
    secret = [row for row in rows if row["secret"]]
    return bool(secret) and all(row["status"] == "PASSED" for row in secret)
