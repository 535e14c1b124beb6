"""Endpoints that need a rule of an app above their own.

The apps are layers (docs/server.md, "Layout"): an app imports only the apps below it. An
endpoint lives in the app of the resource it serves, yet a few of them answer with something an
app above decides: the run endpoints (runs) redact what the submission's owner has not made
visible (submissions, which reads the boards), the node list (nodes) shows the depth of each
node's queues (runs). Such a view names the rules it needs in `handed_in`; the URLconf, which
sits above every app, hands each one in as an object:

    path("runs/<int:run_id>/", RunDetailApi.as_view(source_visible=source_visible), ...)

(leaderboard/api_urls.py). A rule left out stops the server at start, naming it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.core.exceptions import ImproperlyConfigured
from rest_framework.views import APIView


class WiredApi(APIView):
    """An APIView whose `handed_in` attributes must be given to as_view()."""

    handed_in: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        missing = [name for name in cls.handed_in if initkwargs.get(name) is None]
        if missing:
            raise ImproperlyConfigured(
                f"{cls.__name__}.as_view() needs {', '.join(missing)} "
                "(handed in by leaderboard/api_urls.py; see leaderboard/wiring.py)"
            )
        return super().as_view(**initkwargs)
