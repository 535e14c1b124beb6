"""The nodes (/api/nodes/: the list, and creating one) and the node-facing endpoints of a node
itself: enrolment, registration and the heartbeat (/api/agent/...)."""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_field, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import AllowAny, IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from farm.node_api import HeartbeatAck
from farm.queues import device_queue, hardware_queue, node_queue
from leaderboard.accounts.throttles import ThrottledBeforeAuthentication
from leaderboard.nodes.authentication import IsNode, NodeTokenAuthentication
from leaderboard.nodes.models import Node
from leaderboard.nodes.selectors import (
    node_gpus,
    node_health_problems,
    node_list,
    node_status,
)
from leaderboard.nodes.services import node_create, node_enroll, node_heartbeat, node_register
from leaderboard.wiring import WiredApi

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


HeartbeatAckOutput = inline_serializer(
    "HeartbeatAck",
    {
        "status": serializers.CharField(),
        "abandon": serializers.ListField(child=serializers.IntegerField()),
        "drain": serializers.BooleanField(),
        "server_time": serializers.DateTimeField(),
    },
)  # farm.node_api.HeartbeatAck: tests/leaderboard/runs/test_node_api_types.py holds the two equal


class HealthProblem(serializers.Serializer):
    code = serializers.RegexField(r"^[A-Z][A-Z0-9_]{0,49}$")
    detail = serializers.CharField(max_length=2000)


class Health(serializers.Serializer):
    """The agent's own health (farm.node_api.Health): its self-test, disk, token, slots."""

    healthy = serializers.BooleanField()
    problems = HealthProblem(many=True, default=list, max_length=16)
    checks = serializers.IntegerField(min_value=0, default=0, help_text="self-tests run so far")


class NodeOutput(serializers.ModelSerializer):
    hardware = serializers.SerializerMethodField()
    status = serializers.SerializerMethodField()
    queue_depth = serializers.SerializerMethodField()
    problems = serializers.SerializerMethodField()

    class Meta:
        model = Node
        fields = [
            "id",
            "name",
            "hardware",
            "status",
            "problems",
            "enabled",
            "draining",
            "last_heartbeat",
            "registered_at",
            "agent_version",
            "devices",
            "current_runs",
            "queue_depth",
        ]

    def to_representation(self, node: Node) -> dict[str, Any]:
        """What agents report about their machines (free-form JSON) is for operators only:
        others see how many devices there are."""
        data = super().to_representation(node)
        if not self.context.get("staff"):
            data["devices"] = [{"index": i} for i in range(len(node.devices or []))]
        return dict(data)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_hardware(self, node: Node) -> list[str]:
        return sorted(h.name for h in node.hardware.all())

    @extend_schema_field(
        serializers.ChoiceField(choices=["online", "offline", "draining", "unhealthy", "disabled"])
    )
    def get_status(self, node: Node) -> str:
        return node_status(node=node)

    @extend_schema_field(serializers.ListField(child=serializers.DictField()))
    def get_problems(self, node: Node) -> list[dict[str, str]]:
        """Why an unhealthy node takes no work, as its agent said ([{code, detail}])."""
        return node_health_problems(node=node)

    @extend_schema_field(serializers.IntegerField())
    def get_queue_depth(self, node: Node) -> int:
        depth = self.context.get("depth", {})
        return sum(depth.get(h.name, 0) for h in node.hardware.all())


class NodeListCreateApi(WiredApi):
    """Nodes with their hardware, status, last heartbeat and the depth of their queues.
    POST (staff) creates a node and returns its token once."""

    # queued runs per hardware class are the runs app's to count: api_urls.py hands them in
    handed_in = ("queue_depth",)
    queue_depth: Callable[[], dict[str, int]] | None = None

    def get_permissions(self):
        return [AllowAny()] if self.request.method == "GET" else [IsAdminUser()]

    class NodeCreateInput(serializers.Serializer):
        name = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")
        hardware = serializers.ListField(child=serializers.CharField(max_length=50), default=list)

    @extend_schema(responses=NodeOutput(many=True))
    def get(self, request):
        assert self.queue_depth is not None  # WiredApi.as_view requires it
        context = {"depth": self.queue_depth(), "staff": request.user.is_staff}
        return Response(NodeOutput(node_list(), many=True, context=context).data)

    @extend_schema(
        request=NodeCreateInput,
        responses={
            201: inline_serializer(
                "NodeCreated",
                {
                    "id": serializers.IntegerField(),
                    "name": serializers.CharField(),
                    "token": serializers.CharField(),
                },
            )
        },
    )
    def post(self, request):
        data = self.NodeCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        node, key = node_create(**data.validated_data)
        return Response(
            {"id": node.pk, "name": node.name, "token": key}, status=status.HTTP_201_CREATED
        )


class HeartbeatApi(WiredApi):
    """The agent is alive. The answer lists runs it reported as current that it no longer holds
    (`abandon`: stop them, their results would be refused) and whether it should drain."""

    # which runs a node holds is the runs app's to say: api_urls.py hands that in
    handed_in = ("runs_held",)
    runs_held: Callable[..., list[int]] | None = None  # (*, node, run_ids) -> the held ids

    authentication_classes = [NodeTokenAuthentication]
    permission_classes = [IsNode]

    class HeartbeatInput(serializers.Serializer):
        current_runs = serializers.ListField(
            child=serializers.IntegerField(min_value=1), default=list, max_length=MAX_DEVICES
        )
        devices = Devices(required=False)
        health = Health(required=False)

    @extend_schema(
        request=HeartbeatInput,
        responses={200: HeartbeatAckOutput},
    )
    def post(self, request):
        data = self.HeartbeatInput(data=request.data)
        data.is_valid(raise_exception=True)
        current = data.validated_data["current_runs"]
        node = node_heartbeat(
            node=request.auth,
            current_runs=current,
            devices=data.validated_data.get("devices"),
            health=data.validated_data.get("health"),
        )
        assert self.runs_held is not None  # WiredApi.as_view requires it
        held = set(self.runs_held(node=node, run_ids=current))
        ack = HeartbeatAck(
            status=node_status(node=node),
            abandon=sorted(set(current) - held),
            drain=node.draining or not node.enabled,
            server_time=timezone.now().isoformat(),
        )
        return Response(ack.to_json())
