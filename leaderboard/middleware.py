"""Refuse requests whose path or query string holds a NUL character: PostgreSQL cannot store or
compare such strings, and no name in the farm contains one."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse


class RejectNulMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        values = [
            request.path,
            *request.GET.keys(),
            *(v for vs in request.GET.lists() for v in vs[1]),
        ]
        if any("\x00" in v for v in values):
            return JsonResponse(
                {"detail": "the URL contains a NUL character; remove it"}, status=400
            )
        return self.get_response(request)
