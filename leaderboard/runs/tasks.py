from __future__ import annotations

from celery import shared_task

from leaderboard.runs import services, upkeep


@shared_task(name="leaderboard.runs.tasks.reap_lost_runs", acks_late=True)
def reap_lost_runs() -> int:
    return services.runs_reap()


@shared_task(name="leaderboard.runs.tasks.resend_unsent_runs", acks_late=True)
def resend_unsent_runs() -> int:
    return services.runs_resend_unsent()


@shared_task(name="leaderboard.runs.tasks.resend_stale_runs", acks_late=True)
def resend_stale_runs() -> int:
    return upkeep.runs_resend_stale()


@shared_task(name="leaderboard.runs.tasks.reap_unreported_runs", acks_late=True)
def reap_unreported_runs() -> int:
    return upkeep.runs_reap_unreported()


@shared_task(name="leaderboard.runs.tasks.fail_unserved_runs", acks_late=True)
def fail_unserved_runs() -> int:
    return upkeep.runs_fail_unserved()
