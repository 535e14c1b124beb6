"""User API tokens: the lookup (plain SQL built from the models) gives the same token and user
as the ORM, and revocation, deactivation and last-use recording take effect at once."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.forms.models import model_to_dict
from rest_framework.test import APIClient

from leaderboard.accounts.authentication import token_with_user
from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.tokens import token_hash


def client_for(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def test_lookup_gives_what_the_orm_gives(clients, users):
    key = clients["owner"].token
    token = token_with_user(key_hash=token_hash(key))
    expected = ApiToken.objects.select_related("user").get(key_hash=token_hash(key))
    assert token is not None and not token._state.adding
    assert model_to_dict(token) == model_to_dict(expected)
    user_fields = [f.name for f in User._meta.concrete_fields]
    assert model_to_dict(token.user, fields=user_fields) == model_to_dict(
        expected.user, fields=user_fields
    )
    assert token.user == users["owner"] and token.user.check_password("pw-owner")
    assert token_with_user(key_hash=token_hash("fu_nothing")) is None


def test_token_authenticates_its_user(clients):
    r = clients["other"].get("/api/tokens/")
    assert r.status_code == 200
    assert [t["key_hint"] for t in r.json()] == [clients["other"].token[:8]]


def test_revoked_token_is_refused_on_the_next_request(clients):
    owner = clients["owner"]
    [token] = owner.get("/api/tokens/").json()
    assert owner.delete(f"/api/tokens/{token['id']}/").status_code == 204
    r = owner.get("/api/submissions/")
    assert r.status_code == 401
    assert "invalid or revoked API token" in r.json()["detail"]


def test_inactive_user_and_unknown_or_node_token_are_refused(clients, users, node):
    User.objects.filter(pk=users["other"].pk).update(is_active=False)
    assert clients["other"].get("/api/submissions/").status_code == 401
    assert client_for("fu_not-a-token").get("/api/submissions/").status_code == 401
    r = client_for(node.token).get("/api/submissions/")
    assert r.status_code == 401 and "node tokens" in r.json()["detail"]


def test_last_use_is_recorded_at_most_once_a_minute(clients, django_assert_num_queries):
    owner = clients["owner"]
    assert ApiToken.objects.get(key_hash=token_hash(owner.token)).last_used_at is None
    with django_assert_num_queries(3):  # token, its last use, the list
        owner.get("/api/tokens/")
    first = ApiToken.objects.get(key_hash=token_hash(owner.token)).last_used_at
    assert first is not None
    with django_assert_num_queries(2):  # token, the list
        owner.get("/api/tokens/")
    assert ApiToken.objects.get(key_hash=token_hash(owner.token)).last_used_at == first
