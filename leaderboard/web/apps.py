from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "leaderboard.web"
    label = "web"

    def ready(self) -> None:
        from leaderboard import metrics, schema  # noqa: F401  (registers the OpenAPI extensions)

        metrics.register()
