"""The node endpoints that read or change runs: the node list with the depth of each node's
queues, and the heartbeat (which keeps the runs a node holds, or tells it to abandon them)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny, IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from farm.node_api import HeartbeatAck
from leaderboard.nodes.apis import MAX_DEVICES, Devices
from leaderboard.nodes.authentication import IsNode, NodeTokenAuthentication
from leaderboard.nodes.models import Node
from leaderboard.nodes.selectors import node_health_problems, node_list, node_status
from leaderboard.nodes.services import node_create, node_heartbeat
from leaderboard.runs.selectors import queue_depth_by_hardware
from leaderboard.runs.services import runs_held

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


class NodeListCreateApi(APIView):
    """Nodes with their hardware, status, last heartbeat and the depth of their queues.
    POST (staff) creates a node and returns its token once."""

    def get_permissions(self):
        return [AllowAny()] if self.request.method == "GET" else [IsAdminUser()]

    class NodeCreateInput(serializers.Serializer):
        name = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")
        hardware = serializers.ListField(child=serializers.CharField(max_length=50), default=list)

    @extend_schema(responses=NodeOutput(many=True))
    def get(self, request):
        context = {"depth": queue_depth_by_hardware(), "staff": request.user.is_staff}
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


class HeartbeatApi(APIView):
    """The agent is alive. The answer lists runs it reported as current that it no longer holds
    (`abandon`: stop them, their results would be refused) and whether it should drain."""

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
        held = set(runs_held(node=node, run_ids=current))
        ack = HeartbeatAck(
            status=node_status(node=node),
            abandon=sorted(set(current) - held),
            drain=node.draining or not node.enabled,
            server_time=timezone.now().isoformat(),
        )
        return Response(ack.to_json())
