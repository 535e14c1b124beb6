"""OpenAPI descriptions of the farm's token schemes (drf-spectacular extensions)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "leaderboard.accounts.authentication.ApiTokenAuthentication"
    name = "userToken"

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        return {"type": "http", "scheme": "bearer", "description": "a user API token (fu_...)"}


class NodeTokenScheme(OpenApiAuthenticationExtension):
    target_class = "leaderboard.nodes.authentication.NodeTokenAuthentication"
    name = "nodeToken"

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        return {"type": "http", "scheme": "bearer", "description": "a node token (fn_...)"}
