"""Refuse requests whose path or query string holds a NUL character: PostgreSQL cannot store or
compare such strings, and no name in the farm contains one."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
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


class RequestTooLargeMiddleware:
    """Refuse a body over DATA_UPLOAD_MAX_MEMORY_SIZE (FARM_MAX_REQUEST_BYTES) with a 413 that
    says so, before anything reads it: Django would otherwise answer a bare HTML 400 page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit is None or length <= limit:
            return self.get_response(request)
        detail = (
            f"the request body is {length / 2**20:.1f} MiB, over this server's limit of "
            f"{limit / 2**20:.1f} MiB (FARM_MAX_REQUEST_BYTES); a kernel source may be at most "
            f"{settings.FARM_MAX_SOURCE_BYTES // 1024} KiB: send the kernel file alone"
        )
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": detail}, status=413)
        return HttpResponse(detail, status=413, content_type="text/plain; charset=utf-8")
