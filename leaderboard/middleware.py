"""Requests refused before any view sees them: a NUL character in the path or query string
(PostgreSQL cannot store or compare such strings, and no name in the farm contains one), and a
body that is too large or of unknown length."""

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


class BoundedBodyMiddleware:
    """Refuse a request body before any of it is read when it could pass the server's limit
    (FARM_MAX_REQUEST_BYTES, or Django's DATA_UPLOAD_MAX_MEMORY_SIZE when lower), whatever its
    content type: Django's own limit leaves out file parts, so a 1 GB multipart upload used to be
    read whole, and its refusal was a bare HTML 400 page. The answer is a 413 that names the
    limit (JSON under /api/, plain text elsewhere). A chunked body (no Content-Length) cannot be
    bounded up front and WSGI would hand it over as empty: it is refused too, asking for a
    length."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = min(
            settings.FARM_MAX_REQUEST_BYTES,
            settings.DATA_UPLOAD_MAX_MEMORY_SIZE or settings.FARM_MAX_REQUEST_BYTES,
        )
        length = request.META.get("CONTENT_LENGTH") or ""
        if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower() and not length:
            return JsonResponse(
                {"detail": "chunked request bodies are not accepted; send a Content-Length"},
                status=411,
            )
        if not length or (length.isdigit() and int(length) <= limit):
            return self.get_response(request)
        size = f"{int(length) / 2**20:.1f} MiB" if length.isdigit() else "of unknown size"
        detail = (
            f"the request body is over {limit} bytes ({size}, over this server's limit of "
            f"{limit / 2**20:.1f} MiB (FARM_MAX_REQUEST_BYTES)); a kernel source may be at most "
            f"{settings.FARM_MAX_SOURCE_BYTES // 1024} KiB: send the kernel file alone"
        )
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": detail}, status=413)
        return HttpResponse(detail, status=413, content_type="text/plain; charset=utf-8")
