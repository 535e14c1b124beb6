"""The pinned suite as an archive, for agents that do not have it installed.

GET /api/agent/suites/<name>/?hash=<sha256> (node token) answers a gzipped tar of the suite's
pinned files (those its manifest lists, plus the manifest) when the suite the server holds has
that hash; 404 otherwise. The agent verifies the hash again after unpacking.
"""

from __future__ import annotations

import io
import tarfile

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions
from rest_framework.views import APIView

from farm.errors import FarmError
from farm.suite import manifest
from leaderboard.nodes.authentication import IsEnabledNode, NodeTokenAuthentication
from leaderboard.problems import farm_bridge


def suite_archive(*, name: str, suite_hash: str) -> bytes:
    """tar.gz of the pinned suite `name` whose hash is `suite_hash`; LookupError otherwise."""
    try:
        suite = farm_bridge.suite_load(name)
    except FarmError as exc:
        raise LookupError(f"suite {name}: {exc}") from None
    if suite.hash != suite_hash:
        raise LookupError(f"suite {name} here is {suite.hash}, not {suite_hash}")
    files = [*sorted(manifest.read(suite.root)["files"]), manifest.MANIFEST]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for rel in files:
            tar.add(suite.root / rel, arcname=f"{name}/{rel}", recursive=False)
    return buffer.getvalue()


class SuiteArchiveApi(APIView):
    authentication_classes = [NodeTokenAuthentication]
    permission_classes = [IsEnabledNode]

    @extend_schema(
        parameters=[OpenApiParameter("hash", str, required=True)],
        responses={(200, "application/gzip"): OpenApiTypes.BINARY},
    )
    def get(self, request, name: str):
        try:
            data = suite_archive(name=name, suite_hash=request.query_params.get("hash", ""))
        except LookupError as exc:
            raise exceptions.NotFound(str(exc)) from None
        return HttpResponse(data, content_type="application/gzip")
