from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "leaderboard.runs"
    label = "runs"
