from __future__ import annotations

from celery import shared_task

from leaderboard.runs import services


@shared_task(name="leaderboard.runs.tasks.reap_lost_runs", acks_late=True)
def reap_lost_runs() -> int:
    return services.runs_reap()


@shared_task(name="leaderboard.runs.tasks.resend_unsent_runs", acks_late=True)
def resend_unsent_runs() -> int:
    return services.runs_resend_unsent()


# --- upkeep (leaderboard.runs.upkeep), scheduled in leaderboard/celery.py


@shared_task(name="leaderboard.runs.tasks.resend_stale_runs", acks_late=True)
def resend_stale_runs() -> int:
    from leaderboard.runs.upkeep import runs_resend_stale

    return runs_resend_stale()


@shared_task(name="leaderboard.runs.tasks.recompute_boards", acks_late=True)
def recompute_boards() -> int:
    from leaderboard.runs.upkeep import boards_recompute

    return boards_recompute()


@shared_task(name="leaderboard.runs.tasks.mark_stale_nodes", acks_late=True)
def mark_stale_nodes() -> int:
    from leaderboard.runs.upkeep import nodes_mark_stale

    return nodes_mark_stale()


@shared_task(name="leaderboard.runs.tasks.reap_unreported_runs", acks_late=True)
def reap_unreported_runs() -> int:
    from leaderboard.runs.upkeep import runs_reap_unreported

    return runs_reap_unreported()
