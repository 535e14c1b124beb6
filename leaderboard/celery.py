"""The Celery app of the server.

The server sends agent work BY NAME (`farm.agent.evaluate_run`) to queue `hw.<hardware>`: agents
never import Django. The server's own tasks (storing sources, reaping lost runs) use the queue
`server`. Settings (CELERY_*) come from leaderboard.settings.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")

app = Celery("leaderboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.conf.beat_schedule = {
    "reap-lost-runs": {"task": "leaderboard.runs.tasks.reap_lost_runs", "schedule": 30.0},
    "resend-unsent-runs": {"task": "leaderboard.runs.tasks.resend_unsent_runs", "schedule": 60.0},
    "store-pending-sources": {
        "task": "leaderboard.artifacts.tasks.store_pending_sources",
        "schedule": 60.0,
    },
}
