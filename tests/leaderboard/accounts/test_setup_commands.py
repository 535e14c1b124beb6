"""The management command that makes users and tokens for `farm up` and the local farm of the
agent's tests: typed arguments, one JSON line of output, and running it again (its nodes:
tests/leaderboard/nodes/test_create_node.py)."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.tokens import token_hash
from tests.leaderboard.lbkit import command_answer


def live_tokens(user: str) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user__username=user, revoked_at=None))


def test_user_tokens_creates_users_and_replaces_their_tokens(db, tmp_path):
    password = tmp_path / "pw"
    password.write_text("s3cret-pw\n")
    cmd = ("user_tokens", "demo", "alice", "--token-name", "farm-up", "--replace")
    first = command_answer(*cmd, "--password-file", f"demo={password}")["users"]
    assert sorted(first) == ["alice", "demo"] and first["demo"].startswith("fu_")
    assert User.objects.get(username="demo").check_password("s3cret-pw")
    assert not User.objects.get(username="alice").has_usable_password()
    password.write_text("changed\n")  # a user that exists keeps its password
    again = command_answer(*cmd, "--password-file", f"demo={password}")["users"]
    assert User.objects.get(username="demo").check_password("s3cret-pw")
    for user in ("demo", "alice"):
        (token,) = live_tokens(user)  # the first one was revoked
        assert token.name == "farm-up" and token.key_hash == token_hash(again[user])
        assert again[user] != first[user]
    command_answer("user_tokens", "alice")  # without --replace: one more token, named "default"
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
