"""DRF authentication for agents: `Authorization: Bearer fn_...` names one Node.

request.user stays anonymous; request.auth is the Node. User tokens are refused here.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from rest_framework import authentication, exceptions, permissions

from leaderboard.accounts.tokens import NODE_PREFIX, bearer_key, token_hash
from leaderboard.nodes.models import Node


class NodeTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        key = bearer_key(authentication.get_authorization_header(request).decode("latin-1"))
        if key is None:
            return None
        if not key.startswith(NODE_PREFIX):
            raise exceptions.AuthenticationFailed(
                "/api/agent/ endpoints take a node token (fn_...)"
            )
        node = Node.objects.filter(token_hash=token_hash(key)).first()
        if node is None:
            raise exceptions.AuthenticationFailed(
                "unknown node token; ask an operator for a new one"
            )
        return AnonymousUser(), node

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="agent"'


class IsNode(permissions.BasePermission):
    message = "a node token is required"

    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, Node)


class IsEnabledNode(IsNode):
    message = "this node is disabled by an operator"

    def has_permission(self, request, view) -> bool:
        return super().has_permission(request, view) and request.auth.enabled
