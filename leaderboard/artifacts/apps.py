from django.apps import AppConfig


class ArtifactsConfig(AppConfig):
    name = "leaderboard.artifacts"
    label = "artifacts"
