"""The create_node management command that makes nodes for `farm up` and the local farm of the
agent's tests: one JSON line of output, rotating a token, a token file for one node."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from leaderboard.accounts.tokens import token_hash
from leaderboard.nodes.models import Node
from tests.leaderboard.lbkit import GPU, HW, command_answer


def test_create_node_json_creates_then_rotates(db):
    cmd = ("create_node", "local-a", "local-b", "--hardware", HW)
    first = command_answer(*cmd, "--json")["nodes"]
    assert sorted(first) == ["local-a", "local-b"] and first["local-a"].startswith("fn_")
    node = Node.objects.get(name="local-a")
    assert node.token_hash == token_hash(first["local-a"])
    assert [h.name for h in node.allowed_hardware.all()] == [HW]
    with pytest.raises(CommandError, match="exists"):
        call_command(*cmd, "--json", stdout=io.StringIO())
    rotate = ("create_node", "local-a", "--hardware", GPU, "--rotate", "--json")
    rotated = command_answer(*rotate)["nodes"]
    node.refresh_from_db()
    assert node.token_hash == token_hash(rotated["local-a"]) != token_hash(first["local-a"])
    assert [h.name for h in node.allowed_hardware.all()] == [HW]  # rotating changes no hardware


def test_create_node_token_file_is_for_one_node(db, tmp_path):
    path = tmp_path / "token"
    call_command("create_node", "solo", "--hardware", HW, "--token-file", str(path))
    assert path.stat().st_mode & 0o077 == 0
    assert Node.objects.get(name="solo").token_hash == token_hash(path.read_text().strip())
    with pytest.raises(CommandError, match="one node"):
        call_command("create_node", "x", "y", "--token-file", str(path))
