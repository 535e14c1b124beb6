from __future__ import annotations

import hmac
import json
from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from farm.queues import device_queue, hardware_queue, node_queue
from leaderboard.accounts.throttles import ThrottledBeforeAuthentication
from leaderboard.nodes.authentication import IsNode, NodeTokenAuthentication
from leaderboard.nodes.models import Node
from leaderboard.nodes.selectors import node_gpus, node_status
from leaderboard.nodes.services import node_enroll, node_register

MAX_DEVICES = 64  # devices of one node, and so runs it holds at once
MAX_DEVICES_JSON_BYTES = 64 * 1024


class Devices(serializers.ListField):
    """The devices an agent found: at most MAX_DEVICES objects, MAX_DEVICES_JSON_BYTES in all."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=serializers.DictField(), max_length=MAX_DEVICES, **kwargs)

    def to_internal_value(self, data: Any) -> list[Any]:
        value = super().to_internal_value(data)
        if len(json.dumps(value)) > MAX_DEVICES_JSON_BYTES:
            raise serializers.ValidationError(
                f"the devices list is over {MAX_DEVICES_JSON_BYTES} bytes of JSON; send less"
            )
        return list(value)


class RegisterInput(serializers.Serializer):
    hardware = serializers.ListField(
        child=serializers.CharField(max_length=50), allow_empty=False, max_length=MAX_DEVICES
    )
    devices = Devices(default=list)
    agent_version = serializers.CharField(max_length=50, default="", allow_blank=True)
    hostname = serializers.CharField(max_length=200, default="", allow_blank=True)


def _registration(node: Node) -> dict[str, Any]:
    names = sorted(h.name for h in node.hardware.all())
    return {
        "node": {
            "id": node.pk,
            "name": node.name,
            "hardware": names,
            "status": node_status(node=node),
        },
        "queues": [
            q
            for n in names
            for q in (
                hardware_queue(n),
                node_queue(n, node.pk),
                *(device_queue(n, node.pk, i) for i in node_gpus(node, n)),
            )
        ],
        "heartbeat_interval_s": max(1, settings.FARM_NODE_DEAD_AFTER_S // 4),
        "dead_after_s": settings.FARM_NODE_DEAD_AFTER_S,
        "server_time": timezone.now().isoformat(),
    }


RegistrationOutput = inline_serializer(
    "Registration",
    {
        "node": serializers.DictField(),
        "queues": serializers.ListField(child=serializers.CharField()),
        "heartbeat_interval_s": serializers.IntegerField(),
        "dead_after_s": serializers.IntegerField(),
        "server_time": serializers.DateTimeField(),
    },
)


class RegisterApi(APIView):
    """An agent says what hardware classes it serves and what devices it found."""

    authentication_classes = [NodeTokenAuthentication]
    permission_classes = [IsNode]

    @extend_schema(request=RegisterInput, responses={200: RegistrationOutput})
    def post(self, request):
        data = RegisterInput(data=request.data)
        data.is_valid(raise_exception=True)
        node = node_register(node=request.auth, **data.validated_data)
        return Response(_registration(node))


class EnrollApi(ThrottledBeforeAuthentication, APIView):
    """With the operator's enrolment secret (FARM_NODE_ENROLL_TOKEN, in the X-Farm-Enroll
    header), create a node (or rotate its token) and return the node token once."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    class EnrollInput(serializers.Serializer):
        name = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")
        hardware = serializers.ListField(
            child=serializers.CharField(max_length=50), allow_empty=False
        )

    @extend_schema(
        request=EnrollInput,
        responses={
            201: inline_serializer(
                "Enrolled",
                {
                    "id": serializers.IntegerField(),
                    "name": serializers.CharField(),
                    "token": serializers.CharField(),
                },
            )
        },
    )
    def post(self, request):
        secret = settings.FARM_NODE_ENROLL_TOKEN
        given = request.headers.get("X-Farm-Enroll", "")
        if not secret or not hmac.compare_digest(secret.encode(), given.encode()):
            raise exceptions.PermissionDenied(
                "enrolment needs the X-Farm-Enroll secret (FARM_NODE_ENROLL_TOKEN)"
            )
        data = self.EnrollInput(data=request.data)
        data.is_valid(raise_exception=True)
        node, key = node_enroll(**data.validated_data)
        return Response(
            {"id": node.pk, "name": node.name, "token": key}, status=status.HTTP_201_CREATED
        )
