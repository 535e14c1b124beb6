"""The leaderboard server (Django). The Celery app is loaded with Django so that
`shared_task`s and `transaction.on_commit` sends use it."""

from leaderboard.celery import app as celery_app

__all__ = ["celery_app"]
