from django.apps import AppConfig


class JudgingConfig(AppConfig):
    """Judgement above the run lifecycle and the boards: the server's checks of a result, its
    recording, audits and the operator's actions. No models of its own."""

    name = "leaderboard.judging"
    label = "judging"

    def ready(self) -> None:
        from leaderboard.judging import receivers  # noqa: F401  (connects the signal receivers)
