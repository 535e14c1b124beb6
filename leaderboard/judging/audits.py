"""Audits: a result that would take first place on a board is re-run on another node first.

When a leaderboard run's result would count on its board and its SOL score is at least the
board's best, the run's `audit` becomes pending (pending runs do not count) and an audit run is
created: same submission, class and mode, on a different node of the class. Leaderboard mode
draws a fresh secret seed for every evaluation, so the audit also checks unseen inputs. The
audit run is routed to one chosen node's queue (farm.queues.node_queue), never to the node that
produced the result (leaderboard.runs.routing); when no other node of the class is online it
waits, queued and unsent, and the periodic resend tries again.

When the audit's result arrives, the two are compared (audit_disagreements): both must have
PASSED, secret-seed workloads included, and their SOL scores and per-workload times must agree
within FARM_AUDIT_TOLERANCE (a relative difference; times whose confidence intervals overlap
always agree). Agreement confirms the run and it shows on the board; a disagreement, or an
audit that cannot be run, holds it for an operator with both results kept. The operator then
releases it or re-runs the audit from the admin (leaderboard.judging.operator).

A class served by a single enabled node has no other node to audit on; FARM_AUDIT_SINGLE_NODE
says what happens: "same-node" (the default) audits on that node in a fresh process with a fresh
secret seed (it checks unseen inputs and reproducibility, not the node), "wait" waits for a
second node, "skip" shows the result unaudited.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from leaderboard.boards.models import BoardEntry
from leaderboard.boards.services import board_entry_refresh_for_run, counting_runs
from leaderboard.runs.models import Run, WorkloadResult
from leaderboard.runs.routing import audit_target, single_node
from leaderboard.runs.services import runs_send

log = logging.getLogger(__name__)
MAX_LISTED = 5  # workloads named in a disagreement; the rest are counted


def audit_applies(run: Run) -> bool:
    if not settings.FARM_AUDIT or run.hardware_id in settings.FARM_AUDIT_SKIP_HARDWARE:
        return False
    return settings.FARM_AUDIT_SINGLE_NODE != "skip" or not single_node(run.hardware_id)


def audit_wanted(run: Run) -> bool:
    """True when `run` would count on its board and take first place there (ties included)."""
    if run.audit_of_id or not audit_applies(run) or run.sol_score is None:
        return False
    if not counting_runs().filter(pk=run.pk).exists():
        return False
    best = (
        BoardEntry.objects.filter(
            board__problem_id=run.problem_id, board__hardware_id=run.hardware_id
        )
        .order_by("-sol_score")
        .values_list("sol_score", flat=True)
        .first()
    )
    return best is None or run.sol_score >= best


def audit_start(run: Run) -> Run:
    """Hold `run` off its board and create its audit run (sent after the commit)."""
    audit = Run.objects.create(
        audit_of=run,
        submission_id=run.submission_id,
        user_id=run.user_id,
        problem_id=run.problem_id,
        hardware_id=run.hardware_id,
        mode=run.mode,
    )
    waiting = "" if audit_target(audit) else f" (waiting for another online {run.hardware_id} node)"
    audit_set(
        run,
        Run.Audit.PENDING,
        f"would take first place: re-run as run {audit.pk} on another node before it shows"
        + waiting,
    )
    transaction.on_commit(lambda: runs_send(run_ids=[audit.pk]))
    return audit


def audit_conclude(audit: Run) -> Run:
    """The audit run finished with a result: confirm or hold the audited run. Caller is in a
    transaction, has stored the audit's result and refreshes the board entry (the audit run's
    board and user are the audited run's)."""
    original = Run.objects.select_for_update().get(pk=audit.audit_of_id)
    found = audit_disagreements(original, audit, settings.FARM_AUDIT_TOLERANCE)
    node = audit.node.name if audit.node else "?"
    if found:
        detail = (
            f"held for an operator: audit run {audit.pk} on node {node} disagrees: "
            + "; ".join(found)
            + ". Both results are kept."
        )
        audit_set(original, Run.Audit.HELD, detail)
    else:
        audit_set(
            original,
            Run.Audit.CONFIRMED,
            f"confirmed by audit run {audit.pk} on node {node}: SOL score "
            f"{original.sol_score:.4g} here, {audit.sol_score:.4g} there",
        )
    return original


def audit_abandon(audit: Run, reason: str) -> None:
    """The audit run failed for good (no result): hold the audited run for an operator."""
    original = Run.objects.select_for_update().get(pk=audit.audit_of_id)
    audit_set(
        original,
        Run.Audit.HELD,
        f"held for an operator: audit run {audit.pk} could not be evaluated ({reason}); "
        "re-run the audit or release the entry",
    )
    board_entry_refresh_for_run(run=original)


def audit_disagreements(original: Run, audit: Run, tolerance: float) -> list[str]:
    """What differs between the two results beyond noise; empty when they agree."""
    found = []
    if audit.verdict != "PASSED" or audit.state != Run.State.DONE:
        found.append(f"its verdict is {audit.verdict or audit.failure_code or audit.state}")
        return found
    if not _secret_passed(audit):
        found.append("its secret-seed workloads did not all pass")
    if _apart(original.sol_score, audit.sol_score, tolerance):
        found.append(
            f"SOL score {original.sol_score:.4g} vs {audit.sol_score:.4g} "
            f"(more than {tolerance:.0%} apart)"
        )
    mine = {w.workload_id: w for w in _rows(original)}
    slow = []
    for w in _rows(audit):
        o = mine.get(w.workload_id)
        if o is None or w.secret or o.time_ms is None or w.time_ms is None:
            continue
        if _apart(o.time_ms, w.time_ms, tolerance) and not _overlap(o, w):
            slow.append(f"{w.workload_id} {o.time_ms:.4g} ms vs {w.time_ms:.4g} ms")
    if slow:
        more = f" and {len(slow) - MAX_LISTED} more" if len(slow) > MAX_LISTED else ""
        found.append("workload times " + ", ".join(slow[:MAX_LISTED]) + more)
    return found


def audit_set(run: Run, state: str, detail: str) -> None:
    run.audit, run.audit_detail = state, detail
    run.save(update_fields=["audit", "audit_detail"])
    log.info("run %s: audit %s: %s", run.pk, state or "none", detail)


def _rows(run: Run) -> list[WorkloadResult]:
    return list(WorkloadResult.objects.filter(result_id=run.pk))


def _secret_passed(run: Run) -> bool:
    result = getattr(run, "result", None)
    return bool(result and result.secret_passed)


def _apart(a: float | None, b: float | None, tolerance: float) -> bool:
    if not a or not b or a <= 0 or b <= 0:
        return False
    return max(a, b) / min(a, b) - 1.0 > tolerance


def _overlap(a: WorkloadResult, b: WorkloadResult) -> bool:
    ours, theirs = a.interval, b.interval
    return ours is not None and theirs is not None and ours.overlaps(theirs)
