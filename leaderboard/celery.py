"""The Celery app of the server.

The server sends agent work BY NAME (`farm.agent.evaluate_run`) to queue `hw.<hardware>`: agents
never import Django. The server's own tasks (storing sources, reaping lost runs, recomputing
boards, marking nodes stale: each in its own app's tasks.py) use the queue `server`. Settings
(CELERY_*) come from leaderboard.settings.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")

app = Celery("leaderboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _every(name: str) -> float:
    from django.conf import settings

    return float(getattr(settings, name))


app.conf.beat_schedule = {
    "reap-lost-runs": {
        "task": "leaderboard.runs.tasks.reap_lost_runs",
        "schedule": _every("FARM_REAP_INTERVAL_S"),
    },
    "reap-unreported-runs": {
        "task": "leaderboard.runs.tasks.reap_unreported_runs",
        "schedule": _every("FARM_REAP_INTERVAL_S"),
    },
    "resend-unsent-runs": {
        "task": "leaderboard.runs.tasks.resend_unsent_runs",
        "schedule": _every("FARM_RESEND_INTERVAL_S"),
    },
    "resend-stale-runs": {
        "task": "leaderboard.runs.tasks.resend_stale_runs",
        "schedule": _every("FARM_RESEND_INTERVAL_S"),
    },
    "fail-unserved-runs": {
        "task": "leaderboard.runs.tasks.fail_unserved_runs",
        "schedule": _every("FARM_RESEND_INTERVAL_S"),
    },
    "recompute-boards": {
        "task": "leaderboard.boards.tasks.recompute_boards",
        "schedule": _every("FARM_BOARD_RECOMPUTE_S"),
    },
    "mark-stale-nodes": {
        "task": "leaderboard.nodes.tasks.mark_stale_nodes",
        "schedule": _every("FARM_STALE_NODE_SWEEP_S"),
    },
    "store-pending-sources": {
        "task": "leaderboard.submissions.tasks.store_pending_sources",
        "schedule": 60.0,
    },
    "store-pending-artifacts": {
        "task": "leaderboard.artifacts.tasks.store_pending_artifacts",
        "schedule": 60.0,
    },
}
