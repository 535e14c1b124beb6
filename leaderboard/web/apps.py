from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "leaderboard.web"
    label = "web"

    def ready(self) -> None:
        from leaderboard import schema  # noqa: F401  (registers the OpenAPI extensions)
        from leaderboard.web import gauges

        gauges.register()
