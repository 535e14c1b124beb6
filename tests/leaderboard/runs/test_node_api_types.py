"""The node API's typed answers (farm.node_api) and the server's DRF serializers describe the same
fields with the same types, and what the server sends reads back as the typed object."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

import pytest
from rest_framework import serializers

from farm.node_api import HeartbeatAck, Job, NodeApiError
from leaderboard.nodes.apis import HeartbeatAckOutput
from leaderboard.runs.agent_apis import JobOutput

# the serializer field that carries each annotation (a nested typed object is a JSON object)
_FIELD_OF = {
    int: serializers.IntegerField,
    float: serializers.FloatField,
    str: serializers.CharField,
    bool: serializers.BooleanField,
    list[int]: serializers.ListField,
}
_TIMES = {"created_at", "sent_at", "server_time"}  # ISO 8601 strings


def _expected(name: str, hint: Any) -> tuple[type, bool]:
    null = isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint)
    if null:
        (hint,) = [a for a in typing.get_args(hint) if a is not type(None)]
    if name in _TIMES:
        return serializers.DateTimeField, null
    if dataclasses.is_dataclass(hint):
        return serializers.DictField, null
    return _FIELD_OF[hint], null


@pytest.mark.parametrize(
    ("typed", "serializer"), [(Job, JobOutput), (HeartbeatAck, HeartbeatAckOutput)]
)
def test_the_typed_answer_and_the_serializer_have_the_same_fields(typed, serializer):
    hints = typing.get_type_hints(typed)
    fields = serializer.fields
    assert list(hints) == list(fields)
    for name, hint in hints.items():
        kind, null = _expected(name, hint)
        assert type(fields[name]) is kind, name
        assert fields[name].allow_null is null, name


def test_a_heartbeat_answer_reads_back(node):
    body = node.post("/api/agent/heartbeat/", {"current_runs": [4242]}, format="json").json()
    ack = HeartbeatAck.from_json(body)
    assert ack.abandon == [4242] and ack.drain is False and ack.to_json() == body


def test_a_bad_answer_names_the_field():
    with pytest.raises(NodeApiError, match=r"heartbeat\.abandon: must be a list of run ids"):
        HeartbeatAck.from_json(
            {"status": "online", "abandon": ["7"], "drain": False, "server_time": ""}
        )
    with pytest.raises(NodeApiError, match=r"job\.time_limits\.hard_s: is required"):
        Job.from_json(
            {
                "run": 1,
                "attempt": 1,
                "submission": 1,
                "suite": {"name": "s", "hash": "h"},
                **dict.fromkeys(("problem", "hardware", "mode", "language", "filename"), "x"),
                "source": "",
                "source_sha256": "",
                "time_limits": {"soft_s": 1},
                "created_at": "",
                "sent_at": None,
            }
        )
