"""Signed upload/download endpoints that stand in for presigned URLs with local storage."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.parsers import BaseParser
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.artifacts.services import artifact_pending_data, artifact_put_signed
from leaderboard.artifacts.store import (
    DOWNLOAD_SALT,
    UPLOAD_SALT,
    ArtifactStoreError,
    artifact_store,
    attachment,
    signed_key,
)


class RawParser(BaseParser):
    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream.read() if stream is not None else b""


def _payload(token: str, salt: str) -> dict:
    try:
        return signed_key(token, salt=salt)
    except ArtifactStoreError as exc:
        raise exceptions.PermissionDenied(str(exc)) from None


class SignedUploadApi(APIView):
    """PUT the artifact bytes to the URL the server signed (the signature is the credential)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    parser_classes = [RawParser]

    @extend_schema(request={"application/octet-stream": OpenApiTypes.BINARY}, responses={204: None})
    def put(self, request, token: str):
        payload = _payload(token, UPLOAD_SALT)
        artifact_put_signed(key=payload["k"], data=request.body, content_type=payload["ct"])
        # (the key names the run and attempt: artifact_put_signed refuses once they are over)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SignedDownloadApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(responses={(200, "application/octet-stream"): OpenApiTypes.BINARY})
    def get(self, request, token: str):
        payload = _payload(token, DOWNLOAD_SALT)
        data = artifact_pending_data(stored_key=payload["k"])
        if data is None:
            data = artifact_store().get(payload["k"])
        response = HttpResponse(data, content_type=payload.get("ct", "application/octet-stream"))
        response["Content-Disposition"] = attachment(payload.get("f", "artifact"))
        response["X-Content-Type-Options"] = "nosniff"
        return response
