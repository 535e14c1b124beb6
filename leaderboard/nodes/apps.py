from django.apps import AppConfig


class NodesConfig(AppConfig):
    name = "leaderboard.nodes"
    label = "nodes"
