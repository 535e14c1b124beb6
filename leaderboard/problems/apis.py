from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.problems.models import HardwareClass, Problem
from leaderboard.problems.selectors import (
    NotFound,
    hardware_list,
    problem_get,
    problem_list,
    suite_get,
)


class ProblemOutput(serializers.ModelSerializer):
    suite = serializers.CharField(source="suite_id")
    suite_hash = serializers.CharField(source="suite.hash")
    sol = serializers.JSONField(
        source="sol_table",
        help_text="hardware -> [{workload, time_ms, compute_ms, memory_ms, overhead_ms, bound}]",
    )

    class Meta:
        model = Problem
        fields = [
            "suite",
            "suite_hash",
            "name",
            "category",
            "description",
            "signature",
            "languages",
            "dtypes",
            "compute_unit",
            "workloads",
            "sol",
        ]


class ProblemListApi(APIView):
    """Problems of the pinned suites with their workloads and SOL table per hardware class."""

    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[OpenApiParameter("suite", str, description="only this suite")],
        responses=ProblemOutput(many=True),
    )
    def get(self, request):
        problems = problem_list(suite=request.query_params.get("suite"))
        return Response(ProblemOutput(problems, many=True).data)


class ProblemDetailApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=ProblemOutput)
    def get(self, request, suite: str, name: str):
        try:
            problem = problem_get(suite=suite_get(name=suite), name=name)
        except NotFound as exc:
            return Response({"detail": str(exc)}, status=404)
        return Response(ProblemOutput(problem).data)


class HardwareOutput(serializers.ModelSerializer):
    class Meta:
        model = HardwareClass
        fields = ["name", "vendor", "device", "languages", "spec"]


class HardwareListApi(APIView):
    """Hardware classes, the languages they run and their peak figures."""

    permission_classes = [AllowAny]

    @extend_schema(responses=HardwareOutput(many=True))
    def get(self, request):
        return Response(HardwareOutput(hardware_list(), many=True).data)
