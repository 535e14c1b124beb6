from django.apps import AppConfig


class ProblemsConfig(AppConfig):
    name = "leaderboard.problems"
    label = "problems"
