from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    extend_schema,
    extend_schema_field,
)
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.artifacts.services import source_text
from leaderboard.nodes.selectors import hardware_unserved
from leaderboard.pagination import IdCursorPagination, cursor_page
from leaderboard.parsers import StorableFormParser, StorableJSONParser, StorableMultiPartParser
from leaderboard.runs.apis import run_category_field
from leaderboard.runs.models import Run
from leaderboard.runs.redaction import failure_detail_redacted
from leaderboard.submissions.models import Submission
from leaderboard.submissions.selectors import (
    source_visible,
    source_visible_for,
    submission_state,
    submission_state_of,
    submission_status,
    submissions_own,
    submissions_visible,
)
from leaderboard.submissions.services import submission_mark_hacked, submissions_create
from leaderboard.submissions.throttles import HardwareQuotaThrottle
from leaderboard.submissions.validation import SubmissionInvalid, source_decode, submission_check


@extend_schema_field(
    {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
)
class HardwareField(serializers.Field):
    """One hardware class name, or a list of them."""

    def to_internal_value(self, data: Any) -> list[str]:
        names = [data] if isinstance(data, str) else data
        if isinstance(names, list) and all(isinstance(x, str) and "\x00" not in x for x in names):
            return list(names)
        raise serializers.ValidationError("must be a hardware class name or a list of names")

    def to_representation(self, value: Any) -> Any:
        return value


class SubmitInput(serializers.Serializer):
    problem = serializers.CharField(max_length=100)
    hardware = HardwareField()
    source = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="the kernel file's text (or upload it as `file`)",
    )
    file = serializers.FileField(required=False, help_text="multipart upload instead of `source`")
    suite = serializers.CharField(required=False, max_length=100)
    mode = serializers.CharField(required=False, default="benchmark")
    language = serializers.CharField(required=False, max_length=20)
    filename = serializers.CharField(required=False, max_length=200)
    label = serializers.CharField(required=False, default="", allow_blank=True, max_length=200)
    private = serializers.BooleanField(
        required=False, default=True, help_text="private submissions never appear on a board"
    )


class BatchInput(serializers.Serializer):
    submissions = SubmitInput(many=True)


class RunSummary(serializers.ModelSerializer):
    hardware = serializers.CharField(source="hardware_id")
    category = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = [
            "id",
            "hardware",
            "mode",
            "state",
            "attempt",
            "verdict",
            "category",
            "sol_score",
            "failure_code",
            "failure_detail",
            "audit",
            "audit_detail",
            "created_at",
            "finished_at",
        ]

    @extend_schema_field(run_category_field())
    def get_category(self, run: Run) -> str:
        return run.category  # derived: the status read computes it from its row too


class SubmissionOutput(serializers.ModelSerializer):
    user = serializers.CharField(source="user.username")
    suite = serializers.CharField(source="suite_id")
    problem = serializers.CharField(source="problem.name")
    source_sha256 = serializers.CharField(source="source_id")
    state = serializers.SerializerMethodField()
    runs = serializers.SerializerMethodField()
    source_url = serializers.SerializerMethodField()
    hacked_note = serializers.SerializerMethodField()

    class Meta:
        model = Submission
        fields = [
            "id",
            "user",
            "suite",
            "suite_hash",
            "problem",
            "mode",
            "language",
            "filename",
            "label",
            "private",
            "hacked",
            "hacked_note",
            "created_at",
            "state",
            "source_sha256",
            "source_url",
            "runs",
        ]

    def _runs(self, obj: Submission) -> list[Run]:
        if not hasattr(obj, "_run_list"):
            runs = [r for r in obj.runs.all() if r.audit_of_id is None]  # audit runs: not listed
            obj._run_list = sorted(runs, key=lambda r: r.hardware_id)
        return obj._run_list

    @extend_schema_field(serializers.ChoiceField(choices=["queued", "running", "done", "failed"]))
    def get_state(self, obj: Submission) -> str:
        return submission_state(runs=self._runs(obj))

    @extend_schema_field(RunSummary(many=True))
    def get_runs(self, obj: Submission) -> Any:
        runs = RunSummary(self._runs(obj), many=True).data
        if not source_visible(submission=obj, user=self.context["request"].user):
            for run in runs:
                run["failure_detail"] = failure_detail_redacted(
                    code=run["failure_code"], detail=run["failure_detail"]
                )
        return runs

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_hacked_note(self, obj: Submission) -> str | None:
        """Why an operator took the submission off the boards: for its owner and admins."""
        return hacked_note_shown(self.context["request"].user, obj.user_id, obj.hacked_note)

    @extend_schema_field(OpenApiTypes.URI)
    def get_source_url(self, obj: Submission) -> str | None:
        request = self.context["request"]
        if not source_visible(submission=obj, user=request.user):
            return None
        return request.build_absolute_uri(reverse("api-submission-source", args=[obj.pk]))


class SubmitOutput(SubmissionOutput):
    """A created submission, with a warning per hardware class that no online node serves."""

    warnings = serializers.SerializerMethodField()

    class Meta(SubmissionOutput.Meta):
        fields = [*SubmissionOutput.Meta.fields, "warnings"]

    def get_warnings(self, obj: Submission) -> list[str]:
        unserved = self.context.get("unserved", {})  # hardware -> warning, one lookup per POST
        return [unserved[r.hardware_id] for r in self._runs(obj) if r.hardware_id in unserved]


def hacked_note_shown(user, owner_id: int, note: str) -> str | None:
    if user.is_authenticated and (user.is_staff or user.pk == owner_id):
        return note
    return None


def _orm_paths(serializer: serializers.Serializer) -> dict[str, str | None]:
    """Output name -> ORM path of each of a serializer's fields ("user.username" ->
    "user__username"), None for a method field."""
    return {
        name: None if field.source == "*" else field.source.replace(".", "__")
        for name, field in serializer.fields.items()
    }


@functools.cache
def _status_paths() -> tuple[dict[str, str | None], dict[str, str | None]]:
    return _orm_paths(SubmissionOutput()), _orm_paths(RunSummary())


def _run_summary(
    row: dict[str, Any], paths: dict[str, str | None], visible: bool
) -> dict[str, Any]:
    """One run of the status read (`category`, RunSummary's one method field, is derived from
    the row); a node's failure detail follows the source's visibility."""
    category = Run.category_of(state=row["state"], verdict=row["verdict"])
    out = {name: row[path] if path else category for name, path in paths.items()}
    if not visible:
        out["failure_detail"] = failure_detail_redacted(
            code=out["failure_code"], detail=out["failure_detail"]
        )
    return out


def submission_status_json(request, submission_id: int) -> dict[str, Any] | None:
    """What SubmissionOutput gives for one submission, for the status read (the API's most
    frequent request), from plain rows instead of model instances and DRF fields: the same
    fields, a fraction of the CPU. The fields are those of SubmissionOutput and RunSummary, so
    a field added there shows here too;
    tests/leaderboard/submissions/test_submission_status.py checks that both give the same JSON.
    None when the submission is missing or not visible."""
    paths, run_paths = _status_paths()
    found = submission_status(
        user=request.user,
        submission_id=submission_id,
        fields=[*(p for p in paths.values() if p), "problem_id", "hacked_note"],
        run_fields=[*(p for p in run_paths.values() if p), "state"],
    )
    if found is None:
        return None
    row, runs = found
    visible = source_visible_for(
        user=request.user,
        owner_id=row["user_id"],
        private=row["private"],
        problem_id=row["problem_id"],
        hardware=[r["hardware_id"] for r in runs],
    )
    url = reverse("api-submission-source", args=[submission_id])
    computed = {
        "state": submission_state_of(states={r["state"] for r in runs}),
        "runs": [_run_summary(r, run_paths, visible) for r in runs],
        "source_url": request.build_absolute_uri(url) if visible else None,
        "hacked_note": hacked_note_shown(request.user, row["user_id"], row["hacked_note"]),
    }
    return {name: row[path] if path else computed[name] for name, path in paths.items()}


class SubmissionPagination(IdCursorPagination):
    page_size = 50


def _one(data: dict[str, Any]) -> Any:
    source = data.get("source", "")
    upload = data.get("file")
    filename = data.get("filename")
    if upload is not None:
        source = source_decode(upload.read())
        filename = filename or upload.name
    return submission_check(
        problem=data["problem"],
        hardware=data["hardware"],
        source=source or "",
        suite=data.get("suite"),
        mode=data["mode"],
        language=data.get("language"),
        filename=filename or "submission.py",
        private=data["private"],
        label=data["label"],
    )


class SubmissionListCreateApi(APIView):
    """Your submissions (staff: everyone's). POST one submission, or a batch as
    {"submissions": [...]} (at most FARM_MAX_BATCH); each creates one run per hardware class."""

    parser_classes = [StorableJSONParser, StorableMultiPartParser, StorableFormParser]
    throttle_classes = [HardwareQuotaThrottle]

    def throttled(self, request, wait):
        raise exceptions.Throttled(wait, detail=getattr(request, "quota_detail", None))

    @extend_schema(
        operation_id="submissions_list",  # a page of submissions, not one (submissions_retrieve)
        responses=cursor_page("SubmissionPage", SubmissionOutput(many=True)),
    )
    def get(self, request):
        paginator = SubmissionPagination()
        page = paginator.paginate_queryset(
            submissions_own(user=request.user).prefetch_related("runs"), request
        )
        return paginator.get_paginated_response(
            SubmissionOutput(page, many=True, context={"request": request}).data
        )

    @extend_schema(
        request={"application/json": SubmitInput, "multipart/form-data": SubmitInput},
        responses={201: SubmitOutput},
        description='Body: one submission, or {"submissions": [...]} for a batch '
        '(the response is then {"submissions": [...]}).',
    )
    def post(self, request):
        batch = isinstance(request.data, dict) and "submissions" in request.data
        if batch:
            checked = self._batch(request.data)
        else:
            data = SubmitInput(data=request.data)
            data.is_valid(raise_exception=True)
            checked = [_one(data.validated_data)]
        created = submissions_create(user=request.user, requests=checked)
        hardware = sorted({hw.name for c in checked for hw in c.hardware})
        context = {"request": request, "unserved": hardware_unserved(hardware=hardware)}
        out = SubmitOutput(created, many=True, context=context).data
        body = {"submissions": out} if batch else out[0]
        return Response(body, status=status.HTTP_201_CREATED)

    def _batch(self, payload: Any) -> list[Any]:
        data = BatchInput(data=payload)
        data.is_valid(raise_exception=True)
        items = data.validated_data["submissions"]
        if not items:
            raise SubmissionInvalid({"submissions": ["is empty; send at least one submission"]})
        if len(items) > settings.FARM_MAX_BATCH:
            raise SubmissionInvalid(
                {
                    "submissions": [
                        f"has {len(items)} items, over the limit of "
                        f"{settings.FARM_MAX_BATCH} (FARM_MAX_BATCH); split the batch"
                    ]
                }
            )
        checked, errors = [], {}
        for i, item in enumerate(items):
            try:
                checked.append(_one(item))
            except SubmissionInvalid as exc:
                errors[str(i)] = exc.errors
        if errors:
            raise exceptions.ValidationError({"submissions": errors})
        return checked


def _visible_submission(request, submission_id: int) -> Submission:
    submission = submissions_visible(user=request.user).filter(pk=submission_id).first()
    if submission is None:
        raise exceptions.NotFound(
            f"submission {submission_id} does not exist or is not visible to you"
        )
    return submission


class SubmissionDetailApi(APIView):
    """Status and runs of one submission: owner and staff, or anyone when it is not private."""

    permission_classes: list = []

    @extend_schema(responses=SubmissionOutput)
    def get(self, request, submission_id: int):
        body = submission_status_json(request, submission_id)
        if body is None:
            raise exceptions.NotFound(
                f"submission {submission_id} does not exist or is not visible to you"
            )
        return Response(body)


class SubmissionSourceApi(APIView):
    """The source text (text/plain). 503 with Retry-After while artifact storage is down."""

    permission_classes: list = []

    @extend_schema(responses={(200, "text/plain"): OpenApiTypes.STR})
    def get(self, request, submission_id: int):
        submission = _visible_submission(request, submission_id)
        if not source_visible(submission=submission, user=request.user):
            raise exceptions.PermissionDenied("the source is visible to its owner and admins only")
        text = source_text(source=submission.source)
        return HttpResponse(text, content_type="text/plain; charset=utf-8")


class SubmissionHackedApi(APIView):
    """Staff: mark a submission hacked (off every board, evidence kept) or clear the mark."""

    permission_classes = [IsAdminUser]

    class HackedInput(serializers.Serializer):
        hacked = serializers.BooleanField()
        note = serializers.CharField(required=False, default="", allow_blank=True)

    @extend_schema(request=HackedInput, responses=SubmissionOutput)
    def post(self, request, submission_id: int):
        data = self.HackedInput(data=request.data)
        data.is_valid(raise_exception=True)
        submission = Submission.objects.filter(pk=submission_id).first()
        if submission is None:
            raise exceptions.NotFound(f"submission {submission_id} does not exist")
        submission_mark_hacked(submission=submission, **data.validated_data)
        return Response(SubmissionOutput(submission, context={"request": request}).data)
