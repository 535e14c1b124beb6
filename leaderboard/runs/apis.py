"""The runs (/api/runs/...): the list of your runs, one run with its result and artifacts,
cancelling one, and an artifact's download. Node-facing run endpoints: runs/agent_apis.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpResponseRedirect
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.artifacts.selectors import artifacts_stored
from leaderboard.artifacts.services import artifact_download_url
from leaderboard.pagination import IdCursorPagination, cursor_page
from leaderboard.runs.cancel import run_cancel
from leaderboard.runs.models import Result, Run, WorkloadResult
from leaderboard.runs.redaction import document_redacted, failure_detail_redacted
from leaderboard.runs.selectors import result_sizes, run_queue, runs_visible
from leaderboard.wiring import WiredApi

SourceVisible = Callable[..., bool]  # (*, submission, user) -> may `user` read the source

FILTERS = {
    "state": "state",
    "hardware": "hardware_id",
    "mode": "mode",
    "submission": "submission_id",
    "problem": "problem__name",
    "verdict": "verdict",
}
CATEGORY = "category"  # no column: derived from state and verdict (Run.category_q)


def run_category_field() -> serializers.ChoiceField:
    """A run's `category` as its outputs carry it (read-only, derived: Run.category)."""
    return serializers.ChoiceField(
        choices=Run.Category.choices,
        read_only=True,
        help_text="kernel: the verdict is about the kernel; farm: the farm's own outcome "
        '(UNSUPPORTED, INCONCLUSIVE, NODE_FAULT, or a failure to evaluate); "" before the end',
    )


class RunListOutput(serializers.ModelSerializer):
    hardware = serializers.CharField(source="hardware_id")
    problem = serializers.CharField(source="problem.name")
    submission = serializers.IntegerField(source="submission_id")
    audit_of = serializers.IntegerField(
        source="audit_of_id", allow_null=True, help_text="an audit run: the run it re-evaluates"
    )
    category = run_category_field()

    class Meta:
        model = Run
        fields = [
            "id",
            "submission",
            "problem",
            "hardware",
            "mode",
            "state",
            "attempt",
            "verdict",
            "category",
            "sol_score",
            "failure_code",
            "audit",
            "audit_of",
            "created_at",
            "finished_at",
        ]
        extra_kwargs = {
            "audit": {
                "help_text": "a run that would take first place is audited on another node "
                "first: pending and held runs do not show on boards"
            }
        }


class WorkloadOutput(serializers.ModelSerializer):
    class Meta:
        model = WorkloadResult
        fields = [
            "workload_id",
            "secret",
            "status",
            "time_ms",
            "ci_low_ms",
            "ci_high_ms",
            "sol_ms",
            "sol_score",
            "baseline_eager_ms",
            "baseline_compile_ms",
        ]


class ResultOutput(serializers.ModelSerializer):
    workloads = WorkloadOutput(many=True)
    sizes = serializers.SerializerMethodField()

    class Meta:
        model = Result
        fields = [
            "verdict",
            "sol_score",
            "server_reasons",
            "secret_passed",
            "received_at",
            "document",
            "workloads",
            "sizes",
        ]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_sizes(self, result: Result) -> str | None:
        """Which workloads ran, which of the problem's did not and why ("ran: small; not run:
        source (...)"); null when the server cannot read the suite."""
        return result_sizes(result=result)


class QueueOutput(serializers.Serializer):
    position = serializers.IntegerField(help_text="1: the next run of its class to be taken")
    warning = serializers.CharField(
        allow_null=True, help_text="set when no online node serves the run's class now"
    )


class RunDetailOutput(RunListOutput):
    result = serializers.SerializerMethodField()
    artifacts = serializers.SerializerMethodField()
    audit_run = serializers.SerializerMethodField()
    queue = serializers.SerializerMethodField()

    class Meta(RunListOutput.Meta):
        fields = [
            *RunListOutput.Meta.fields,
            "audit_detail",
            "audit_run",
            "failure_detail",
            "claimed_at",
            "started_at",
            "queue",
            "result",
            "artifacts",
        ]

    @extend_schema_field(QueueOutput(allow_null=True))
    def get_queue(self, run: Run) -> dict[str, Any] | None:
        """Where a queued run stands (None once a node has claimed it)."""
        return run_queue(run)

    @extend_schema_field(ResultOutput(allow_null=True))
    def get_result(self, run: Run) -> Any:
        result = Result.objects.filter(run=run).prefetch_related("workloads").first()
        if result is None:
            return None
        data = ResultOutput(result).data
        if not self.context["source_visible"]:
            data["document"] = document_redacted(result.document)
        return data

    def to_representation(self, run: Run) -> dict[str, Any]:
        data = dict(super().to_representation(run))
        if not self.context["source_visible"]:
            data["failure_detail"] = failure_detail_redacted(
                code=run.failure_code, detail=run.failure_detail
            )
        return data

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_audit_run(self, run: Run) -> int | None:
        """The audit run that re-evaluates this run, if any."""
        return Run.objects.filter(audit_of=run).values_list("id", flat=True).first()

    @extend_schema_field(serializers.ListField(child=serializers.DictField()))
    def get_artifacts(self, run: Run) -> list[dict[str, Any]]:
        request = self.context["request"]
        if not _is_owner(request.user, run):
            return []
        return [
            {
                "name": a.name,
                "attempt": a.attempt,
                "url": request.build_absolute_uri(
                    reverse("api-run-artifact", args=[run.pk, a.name])
                ),
            }
            for a in artifacts_stored(run=run).order_by("name")
        ]


def _is_owner(user, run: Run) -> bool:
    return bool(user.is_authenticated and (user.is_staff or user.pk == run.user_id))


class RunPagination(IdCursorPagination):
    page_size = 100


class RunListApi(APIView):
    """Your runs (staff: everyone's), newest first, filtered by query parameters."""

    @extend_schema(
        operation_id="runs_list",  # a page of runs, not one run (runs_retrieve)
        parameters=[OpenApiParameter(name, str) for name in (*FILTERS, CATEGORY)],
        responses=cursor_page("RunPage", RunListOutput(many=True)),
    )
    def get(self, request):
        qs = runs_visible(user=request.user)
        for param, field in FILTERS.items():
            value = request.query_params.get(param)
            if value is not None:
                if param == "submission" and not value.isdigit():
                    raise exceptions.ValidationError(
                        {"submission": ["must be a submission id (integer)"]}
                    )
                qs = qs.filter(**{field: value})
        if (category := request.query_params.get(CATEGORY)) is not None:
            qs = qs.filter(Run.category_q(category))
        paginator = RunPagination()
        page = paginator.paginate_queryset(qs, request)
        return paginator.get_paginated_response(RunListOutput(page, many=True).data)


def _visible_run(request, run_id: int) -> Run:
    run = Run.objects.select_related("problem", "submission").filter(pk=run_id).first()
    if run is None or not (_is_owner(request.user, run) or not run.submission.private):
        raise exceptions.NotFound(f"run {run_id} does not exist or is not visible to you")
    return run


class OneRunApi(WiredApi):
    """An endpoint that answers with one run, its document redacted unless the user may read
    the run's source. That rule is the submissions app's (a board's owner can make its sources
    public): leaderboard/api_urls.py hands it in as `source_visible` (leaderboard/wiring.py)."""

    handed_in = ("source_visible",)
    source_visible: SourceVisible | None = None

    def detail(self, request, run: Run) -> dict[str, Any]:
        assert self.source_visible is not None  # WiredApi.as_view requires it
        visible = self.source_visible(submission=run.submission, user=request.user)
        context = {"request": request, "source_visible": visible}
        return dict(RunDetailOutput(run, context=context).data)


class RunDetailApi(OneRunApi):
    """One run with its result document, per-workload rows and (for the owner) artifacts."""

    permission_classes: list = []

    @extend_schema(responses=RunDetailOutput)
    def get(self, request, run_id: int):
        return Response(self.detail(request, _visible_run(request, run_id)))


class RunCancelApi(OneRunApi):
    """Owner and staff: cancel a run that has not finished (it fails as CANCELLED; a node
    running it is told to stop). Cancelling it again answers the same; 409 once finished."""

    @extend_schema(request=None, responses=RunDetailOutput)
    def post(self, request, run_id: int):
        run = _visible_run(request, run_id)
        if not _is_owner(request.user, run):
            raise exceptions.PermissionDenied("only the run's owner and admins may cancel it")
        run = run_cancel(run_id=run.pk, by=request.user.get_username())  # RunConflict: 409
        return Response(self.detail(request, run))


class RunArtifactApi(APIView):
    """Owner and staff: redirect (302) to a short-lived download URL of an artifact."""

    @extend_schema(responses={302: None})
    def get(self, request, run_id: int, name: str):
        run = _visible_run(request, run_id)
        if not _is_owner(request.user, run):
            raise exceptions.PermissionDenied(
                "artifacts are visible to the run's owner and admins only"
            )
        artifact = artifacts_stored(run=run).filter(name=name).first()
        if artifact is None:
            raise exceptions.NotFound(f"run {run_id} has no artifact '{name}'")
        return HttpResponseRedirect(
            artifact_download_url(artifact=artifact, base_url=_base(request))
        )


def _base(request) -> str:
    return request.build_absolute_uri("/")
