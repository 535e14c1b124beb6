"""The node's result post (/api/agent/runs/<id>/result/), authenticated by node token."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from leaderboard.artifacts.services import ARTIFACT_TYPES
from leaderboard.judging.services import result_record
from leaderboard.runs.agent_apis import AgentApi, AttemptInput, StateOutput, run_state
from leaderboard.runs.models import Run
from leaderboard.runs.services import run_failure_record


class FailureInput(serializers.Serializer):
    code = serializers.RegexField(
        r"^[A-Z][A-Z0-9_]{0,49}$", help_text="UPPER_SNAKE, e.g. SANDBOX_CRASH"
    )
    detail = serializers.CharField(max_length=10000)
    retryable = serializers.BooleanField(default=False)
    node_fault = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="the node or its host is at fault (default: a retryable failure is): the "
        "attempt is not charged and the run is retried on another node",
    )


class ResultInput(AttemptInput):
    result = serializers.JSONField(required=False, help_text="a farm.result/1 document")
    failure = FailureInput(
        required=False, help_text="instead of `result`: the run could not be evaluated"
    )
    artifacts = serializers.ListField(
        child=serializers.CharField(max_length=64),
        required=False,
        default=list,
        max_length=len(ARTIFACT_TYPES),
        help_text="the artifacts uploaded for this attempt",
    )

    def validate(self, attrs):
        if ("result" in attrs) == ("failure" in attrs):
            raise serializers.ValidationError("send exactly one of `result` or `failure`")
        return attrs


class ResultApi(AgentApi):
    """Report a run's result document (or a failure). Idempotent: the same post again returns
    the stored outcome with duplicate=true and changes nothing."""

    @extend_schema(request=ResultInput, responses={200: StateOutput})
    def post(self, request, run_id: int):
        data = ResultInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        if "failure" in v:
            recorded = run_failure_record(
                run_id=run_id, node=request.auth, attempt=v["attempt"], **v["failure"]
            )
        else:
            recorded = result_record(
                run_id=run_id,
                node=request.auth,
                attempt=v["attempt"],
                document=v["result"],
                artifacts=v["artifacts"],
            )
        run = Run.objects.select_related("result").get(pk=recorded.run.pk)
        return Response(run_state(run, recorded.duplicate))
