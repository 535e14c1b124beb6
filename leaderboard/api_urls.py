"""The REST API under /api/ (names fixed by DESIGN.md)."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerView,
)
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from leaderboard.accounts.apis import TokenDeleteApi, TokenListCreateApi
from leaderboard.artifacts.apis import SignedDownloadApi, SignedUploadApi
from leaderboard.boards.apis import BoardDetailApi, BoardListApi
from leaderboard.judging.apis import ResultApi
from leaderboard.nodes.apis import EnrollApi, HeartbeatApi, NodeListCreateApi, RegisterApi
from leaderboard.nodes.suite_archive import SuiteArchiveApi
from leaderboard.problems.apis import HardwareListApi, ProblemDetailApi, ProblemListApi
from leaderboard.runs.agent_apis import ArtifactUrlApi, ClaimApi, StartApi
from leaderboard.runs.apis import RunArtifactApi, RunCancelApi, RunDetailApi, RunListApi
from leaderboard.runs.selectors import queue_depth_by_hardware
from leaderboard.runs.services import runs_held
from leaderboard.submissions.apis import (
    SubmissionDetailApi,
    SubmissionHackedApi,
    SubmissionListCreateApi,
    SubmissionSourceApi,
)
from leaderboard.submissions.selectors import source_visible


class ApiRoot(APIView):
    """Entry points of the API."""

    permission_classes = [AllowAny]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        names = [
            "schema",
            "docs",
            "problems",
            "hardware",
            "submissions",
            "runs",
            "boards",
            "nodes",
            "tokens",
        ]
        return Response({name: reverse(f"api-{name}", request=request) for name in names})


urlpatterns = [
    path("", ApiRoot.as_view(), name="api-root"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path(
        "redoc/",
        SpectacularRedocView.as_view(url_name="api-schema", template_name="web/redoc.html"),
        name="api-redoc",
    ),
    path("problems/", ProblemListApi.as_view(), name="api-problems"),
    path("problems/<str:suite>/<str:name>/", ProblemDetailApi.as_view(), name="api-problem"),
    path("hardware/", HardwareListApi.as_view(), name="api-hardware"),
    path("submissions/", SubmissionListCreateApi.as_view(), name="api-submissions"),
    path("submissions/<int:submission_id>/", SubmissionDetailApi.as_view(), name="api-submission"),
    path(
        "submissions/<int:submission_id>/source/",
        SubmissionSourceApi.as_view(),
        name="api-submission-source",
    ),
    path(
        "submissions/<int:submission_id>/hacked/",
        SubmissionHackedApi.as_view(),
        name="api-submission-hacked",
    ),
    path("runs/", RunListApi.as_view(), name="api-runs"),
    path(
        "runs/<int:run_id>/",
        RunDetailApi.as_view(source_visible=source_visible),
        name="api-run",
    ),
    path(
        "runs/<int:run_id>/cancel/",
        RunCancelApi.as_view(source_visible=source_visible),
        name="api-run-cancel",
    ),
    path(
        "runs/<int:run_id>/artifacts/<str:name>/", RunArtifactApi.as_view(), name="api-run-artifact"
    ),
    path("boards/", BoardListApi.as_view(), name="api-boards"),
    path(
        "boards/<str:suite>/<str:problem>/<str:hardware>/",
        BoardDetailApi.as_view(),
        name="api-board",
    ),
    path(
        "nodes/",
        NodeListCreateApi.as_view(queue_depth=queue_depth_by_hardware),
        name="api-nodes",
    ),
    path("tokens/", TokenListCreateApi.as_view(), name="api-tokens"),
    path("tokens/<int:token_id>/", TokenDeleteApi.as_view(), name="api-token"),
    path("artifacts/<str:token>/", SignedDownloadApi.as_view(), name="api-artifact-download"),
    # node-facing
    path("agent/enroll/", EnrollApi.as_view(), name="agent-enroll"),
    path("agent/register/", RegisterApi.as_view(), name="agent-register"),
    path("agent/heartbeat/", HeartbeatApi.as_view(runs_held=runs_held), name="agent-heartbeat"),
    path("agent/runs/<int:run_id>/claim/", ClaimApi.as_view(), name="agent-claim"),
    path("agent/runs/<int:run_id>/start/", StartApi.as_view(), name="agent-start"),
    path("agent/runs/<int:run_id>/result/", ResultApi.as_view(), name="agent-result"),
    path("agent/runs/<int:run_id>/artifacts/", ArtifactUrlApi.as_view(), name="agent-artifact-url"),
    path("agent/upload/<str:token>/", SignedUploadApi.as_view(), name="agent-upload"),
    path("agent/suites/<str:name>/", SuiteArchiveApi.as_view(), name="agent-suite"),
]
