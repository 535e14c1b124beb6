"""Node-facing run endpoints (/api/agent/runs/<id>/...), authenticated by node token; the
result post is judgement (leaderboard.judging.apis)."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from farm.node_api import Job, SuiteRef, TimeLimits
from leaderboard.artifacts.services import ARTIFACT_TYPES, artifact_upload_url, source_text
from leaderboard.nodes.authentication import IsEnabledNode, NodeTokenAuthentication
from leaderboard.runs.models import Run
from leaderboard.runs.services import (
    run_check_upload,
    run_claim,
    run_source_for_claim,
    run_start,
)

JobOutput = inline_serializer(
    "Job",
    {
        "run": serializers.IntegerField(),
        "attempt": serializers.IntegerField(),
        "submission": serializers.IntegerField(),
        "suite": serializers.DictField(help_text="{name, hash}"),
        "problem": serializers.CharField(),
        "hardware": serializers.CharField(),
        "mode": serializers.CharField(),
        "language": serializers.CharField(),
        "filename": serializers.CharField(),
        "source": serializers.CharField(),
        "source_sha256": serializers.CharField(),
        "time_limits": serializers.DictField(help_text="{soft_s, hard_s}"),
        "created_at": serializers.DateTimeField(),
        "sent_at": serializers.DateTimeField(allow_null=True),
        "queued_s": serializers.FloatField(
            allow_null=True, help_text="from the hand-off to the broker to this claim, s"
        ),
        "lease_s": serializers.FloatField(
            allow_null=True, help_text="how long the run stays this node's without a heartbeat, s"
        ),
    },
)  # farm.node_api.Job: tests/leaderboard/runs/test_node_api_types.py holds the two equal
StateOutput = inline_serializer(
    "RunState",
    {
        "run": serializers.IntegerField(),
        "attempt": serializers.IntegerField(),
        "state": serializers.CharField(),
        "verdict": serializers.CharField(),
        "duplicate": serializers.BooleanField(),
        "server_reasons": serializers.ListField(child=serializers.DictField()),
    },
)


class AgentApi(APIView):
    authentication_classes = [NodeTokenAuthentication]
    permission_classes = [IsEnabledNode]


def job(run: Run, *, source: str | None) -> dict:
    """The job a claim hands out (farm.node_api.Job); `source` as read before the claim (read
    now when the claim was not foreseeable, e.g. a run queued between the read and the claim)."""
    submission = run.submission
    soft, hard = settings.FARM_TIME_LIMITS_S[run.mode]
    return Job(
        run=run.pk,
        attempt=run.attempt,
        submission=submission.pk,
        suite=SuiteRef(name=submission.suite_id, hash=submission.suite_hash),
        problem=run.problem.name,
        hardware=run.hardware_id,
        mode=run.mode,
        language=submission.language,
        filename=submission.filename,
        source=source if source is not None else source_text(source=submission.source),
        source_sha256=submission.source_id,
        time_limits=TimeLimits(soft_s=soft, hard_s=hard),
        created_at=run.created_at.isoformat(),
        sent_at=run.sent_at.isoformat() if run.sent_at else None,
        queued_s=_queued_s(run),
        lease_s=float(settings.FARM_NODE_DEAD_AFTER_S),
    ).to_json()


def _queued_s(run: Run) -> float | None:
    """Seconds from the hand-off to the broker to the claim, on the server's clock."""
    if run.sent_at is None or run.claimed_at is None:
        return None
    return round(max(0.0, (run.claimed_at - run.sent_at).total_seconds()), 3)


class AttemptInput(serializers.Serializer):
    attempt = serializers.IntegerField(
        min_value=1, help_text="the attempt number the claim returned"
    )


class ClaimInput(serializers.Serializer):
    device_index = serializers.IntegerField(
        min_value=0,
        required=False,
        allow_null=True,
        help_text="the GPU that will run it (the vendor tool's index); audits avoid the GPU "
        "that produced the result they check",
    )


class ClaimApi(AgentApi):
    """Claim a queued run: exactly one node wins (200 with the job); others get 409."""

    @extend_schema(request=ClaimInput, responses={200: JobOutput})
    def post(self, request, run_id: int):
        data = ClaimInput(data=request.data)
        data.is_valid(raise_exception=True)
        text = run_source_for_claim(run_id=run_id, node=request.auth)
        device_index = data.validated_data.get("device_index")
        run = run_claim(run_id=run_id, node=request.auth, device_index=device_index)
        run = Run.objects.select_related("submission__source", "problem").get(pk=run.pk)
        return Response(job(run, source=text))


def run_state(run: Run, duplicate: bool = False) -> dict:
    result = getattr(run, "result", None) if run.state in Run.TERMINAL else None
    return {
        "run": run.pk,
        "attempt": run.attempt,
        "state": run.state,
        "verdict": run.verdict,
        "duplicate": duplicate,
        "server_reasons": result.server_reasons if result else [],
    }


class StartApi(AgentApi):
    """claimed -> running (idempotent for the holder)."""

    @extend_schema(request=AttemptInput, responses={200: StateOutput})
    def post(self, request, run_id: int):
        data = AttemptInput(data=request.data)
        data.is_valid(raise_exception=True)
        run = run_start(run_id=run_id, node=request.auth, attempt=data.validated_data["attempt"])
        return Response(run_state(run))


class ArtifactUrlApi(AgentApi):
    """A URL to PUT one artifact of the held run to (nodes hold no storage credentials)."""

    class ArtifactUrlInput(AttemptInput):
        name = serializers.ChoiceField(
            choices=sorted(ARTIFACT_TYPES), help_text="the server gives each its content type"
        )
        content_type = serializers.CharField(
            max_length=100, required=False, help_text="ignored: the server's type is in `headers`"
        )

    @extend_schema(
        request=ArtifactUrlInput,
        responses={
            200: inline_serializer(
                "UploadUrl",
                {
                    "name": serializers.CharField(),
                    "key": serializers.CharField(),
                    "method": serializers.CharField(),
                    "url": serializers.URLField(),
                    "headers": serializers.DictField(),
                },
            )
        },
    )
    def post(self, request, run_id: int):
        data = self.ArtifactUrlInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        run = run_check_upload(run_id=run_id, node=request.auth, attempt=v["attempt"])
        body = artifact_upload_url(
            run=run, node=request.auth, name=v["name"], base_url=request.build_absolute_uri("/")
        )
        return Response(body)
