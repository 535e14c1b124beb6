"""The management commands that make users, tokens and nodes for `farm up` and the local farm
of the agent's tests: typed arguments, one JSON line of output, and running them again."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.tokens import token_hash
from leaderboard.nodes.models import Node
from tests.leaderboard.lbkit import GPU, HW


def answer(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, stdout=out)
    (line,) = out.getvalue().splitlines()  # one line, for the caller to parse
    return json.loads(line)


def live_tokens(user: str) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user__username=user, revoked_at=None))


def test_user_tokens_creates_users_and_replaces_their_tokens(db, tmp_path):
    password = tmp_path / "pw"
    password.write_text("s3cret-pw\n")
    cmd = ("user_tokens", "demo", "alice", "--token-name", "farm-up", "--replace")
    first = answer(*cmd, "--password-file", f"demo={password}")["users"]
    assert sorted(first) == ["alice", "demo"] and first["demo"].startswith("fu_")
    assert User.objects.get(username="demo").check_password("s3cret-pw")
    assert not User.objects.get(username="alice").has_usable_password()
    password.write_text("changed\n")  # a user that exists keeps its password
    again = answer(*cmd, "--password-file", f"demo={password}")["users"]
    assert User.objects.get(username="demo").check_password("s3cret-pw")
    for user in ("demo", "alice"):
        (token,) = live_tokens(user)  # the first one was revoked
        assert token.name == "farm-up" and token.key_hash == token_hash(again[user])
        assert again[user] != first[user]
    answer("user_tokens", "alice")  # without --replace: one more token, named "default"
    assert sorted(t.name for t in live_tokens("alice")) == ["default", "farm-up"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--password-file", "no-equals-sign"), "USER=PATH"),
        (("--password-file", "bob=/nonexistent/pw"), "user not asked for"),
        (("--password-file", "demo=/nonexistent/pw"), "cannot read the password file"),
    ],
)
def test_user_tokens_refuses_bad_password_files(db, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("user_tokens", "demo", *args, stdout=io.StringIO())
    assert not User.objects.filter(username="demo").exists()


def test_create_node_json_creates_then_rotates(db):
    cmd = ("create_node", "local-a", "local-b", "--hardware", HW)
    first = answer(*cmd, "--json")["nodes"]
    assert sorted(first) == ["local-a", "local-b"] and first["local-a"].startswith("fn_")
    node = Node.objects.get(name="local-a")
    assert node.token_hash == token_hash(first["local-a"])
    assert [h.name for h in node.allowed_hardware.all()] == [HW]
    with pytest.raises(CommandError, match="exists"):
        call_command(*cmd, "--json", stdout=io.StringIO())
    rotated = answer("create_node", "local-a", "--hardware", GPU, "--rotate", "--json")["nodes"]
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
