from __future__ import annotations

import dataclasses
from typing import Any

from django.core.cache import cache
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.boards.models import Board
from leaderboard.boards.selectors import (
    BoardStamp,
    RankedEntry,
    board_deterministic,
    board_get,
    board_list,
    board_ranking,
    board_stamp,
)
from leaderboard.boards.services import board_get_or_create, board_update
from leaderboard.problems.selectors import NotFound, hardware_get, problem_get, suite_get

_ENTRY_FIELDS = {
    "rank": serializers.IntegerField(),
    "tied": serializers.BooleanField(help_text="time intervals overlap with a neighbour's"),
    "user": serializers.CharField(),
    "submission": serializers.IntegerField(),
    "run": serializers.IntegerField(),
    "sol_score": serializers.FloatField(),
    "time_ms": serializers.FloatField(allow_null=True),
    "sol_ms": serializers.FloatField(allow_null=True),
    "fraction_of_sol": serializers.FloatField(allow_null=True),
    "speedup_eager": serializers.FloatField(allow_null=True),
    "speedup_compile": serializers.FloatField(allow_null=True),
    "intervals": serializers.DictField(),
    "workloads": serializers.DictField(
        help_text="workload id -> {time_ms, sol_ms, sol_score, eager_ms} of the public workloads"
    ),
    "copy_of": inline_serializer(
        "CopyFlag",
        {
            "submission": serializers.IntegerField(),
            "user": serializers.CharField(),
            "likeness": serializers.FloatField(),
        },
        allow_null=True,
        help_text="an earlier public entry whose source this one nearly repeats (flag only)",
    ),
    "submitted_at": serializers.DateTimeField(),
    "updated_at": serializers.DateTimeField(),
}
BoardOutput = inline_serializer(
    "Board",
    {
        "suite": serializers.CharField(),
        "suite_hash": serializers.CharField(),
        "problem": serializers.CharField(),
        "hardware": serializers.CharField(),
        "owner": serializers.CharField(allow_null=True),
        "sources_public": serializers.BooleanField(),
        "deterministic": serializers.BooleanField(
            help_text="equal times tie exactly and the earlier submission ranks first"
        ),
        "entries": inline_serializer("BoardEntry", _ENTRY_FIELDS, many=True),
    },
)


def entry_json(r: RankedEntry) -> dict[str, Any]:
    e = r.entry
    return {
        "rank": r.rank,
        "tied": r.tied,
        "user": e.user.username,
        "submission": e.submission_id,
        "run": e.run_id,
        "sol_score": e.sol_score,
        "time_ms": e.time_ms,
        "sol_ms": e.sol_ms,
        "fraction_of_sol": e.fraction_of_sol,
        "speedup_eager": e.speedup_eager,
        "speedup_compile": e.speedup_compile,
        "intervals": e.intervals,
        "workloads": e.workloads,
        "copy_of": dataclasses.asdict(r.copy_of) if r.copy_of else None,
        "submitted_at": e.submission.created_at,
        "updated_at": e.updated_at,
    }


def board_json(board: Board | None, suite: Any, problem: Any, hardware: str) -> dict[str, Any]:
    return _board_json(board, suite, problem, hardware)


def board_json_bytes(stamp: BoardStamp) -> bytes:
    """The board rendered as JSON, cached per stamp: every change of its entries bumps the
    board's version, so a stamp never outlives what was rendered under it."""
    key = f"board:{stamp.pk}:{stamp.version}:{stamp.sources_public}:{stamp.owner_id}"
    found = cache.get(key)
    if found is None:
        board = board_get(pk=stamp.pk)
        doc = _board_json(board, board.problem.suite, board.problem, board.hardware_id)
        found = JSONRenderer().render(doc)
        cache.set(key, found, timeout=300)
    return found


def _board_json(board: Board | None, suite: Any, problem: Any, hardware: str) -> dict[str, Any]:
    ranked = board_ranking(board=board) if board else []
    return {
        "suite": suite.name,
        "suite_hash": suite.hash,
        "problem": problem.name,
        "hardware": hardware,
        "owner": board.owner.username if board and board.owner else None,
        "sources_public": bool(board and board.sources_public),
        "deterministic": board_deterministic(hardware),
        "entries": [entry_json(r) for r in ranked],
    }


def _resolve(suite: str, problem: str, hardware: str):
    try:
        s = suite_get(name=suite)
        return s, problem_get(suite=s, name=problem), hardware_get(name=hardware)
    except NotFound as exc:
        raise exceptions.NotFound(str(exc)) from None


class BoardListApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        responses=inline_serializer(
            "BoardRef",
            {
                "suite": serializers.CharField(),
                "problem": serializers.CharField(),
                "hardware": serializers.CharField(),
                "url": serializers.URLField(),
            },
            many=True,
        )
    )
    def get(self, request):
        return Response(
            [
                {
                    "suite": b.problem.suite_id,
                    "problem": b.problem.name,
                    "hardware": b.hardware_id,
                    "url": request.build_absolute_uri(
                        f"/api/boards/{b.problem.suite_id}/{b.problem.name}/{b.hardware_id}/"
                    ),
                }
                for b in board_list()
            ]
        )


class BoardDetailApi(APIView):
    """Ranked entries of a board. PATCH (board owner or staff): {"sources_public": true}."""

    def get_permissions(self):
        return [AllowAny()] if self.request.method == "GET" else super().get_permissions()

    class BoardUpdateInput(serializers.Serializer):
        sources_public = serializers.BooleanField()

    @extend_schema(responses=BoardOutput)
    def get(self, request, suite: str, problem: str, hardware: str):
        stamp = board_stamp(suite=suite, problem=problem, hardware=hardware)
        if stamp is not None:
            return HttpResponse(board_json_bytes(stamp), content_type="application/json")
        s, p, h = _resolve(suite, problem, hardware)
        return Response(board_json(None, s, p, h.name))

    @extend_schema(request=BoardUpdateInput, responses=BoardOutput)
    def patch(self, request, suite: str, problem: str, hardware: str):
        s, p, h = _resolve(suite, problem, hardware)
        board = board_get_or_create(problem_id=p.pk, hardware_id=h.name)
        if not (request.user.is_staff or board.owner_id == request.user.pk):
            raise exceptions.PermissionDenied("only the board's owner or an admin may change it")
        data = self.BoardUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        board_update(board=board, sources_public=data.validated_data["sources_public"])
        return Response(board_json(board, s, p, h.name))
