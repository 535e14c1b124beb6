"""OpenAPI descriptions of the farm's token schemes (drf-spectacular extensions)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "leaderboard.accounts.authentication.ApiTokenAuthentication"
    name = "userToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "a user API token (fu_...)"}


class NodeTokenScheme(OpenApiAuthenticationExtension):
    target_class = "leaderboard.nodes.authentication.NodeTokenAuthentication"
    name = "nodeToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "a node token (fn_...)"}


# Every answer the API can give besides an operation's own: the parsers (400: malformed,
# nested too deep, unstorable text; 411 chunked, 413 too large, 415 a media type none of them
# reads), authentication and permissions (401, 403), missing objects and invalid cursors (404),
# wrong methods (405), conflicts of run state (409), quotas and throttles (429), artifact
# storage down (503).
ERROR_STATUSES = {
    "400": "the request is malformed or invalid; the body says what to fix",
    "401": "no credentials, or credentials that are not valid here",
    "403": "the caller may not do this",
    "404": "no such object, or not visible to the caller",
    "405": "the method is not allowed on this path",
    "409": "the object's state does not allow this now",
    "411": "a chunked body: send a Content-Length",
    "413": "the body is over FARM_MAX_REQUEST_BYTES",
    "415": "the body's media type cannot be read here: send application/json",
    "429": "a quota or throttle: retry after Retry-After seconds",
    "503": "artifact storage is unavailable: nothing was lost, retry after Retry-After seconds",
}
ERROR_SCHEMA = {
    "type": "object",
    "description": "{detail: why} or, for invalid fields, {field: [why, ...]}",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": True,
}


def declare_error_responses(result: dict, generator, request, public) -> dict:
    """drf-spectacular postprocessing hook: declare ERROR_STATUSES on every operation (with
    the error body's schema) where the operation does not declare them itself, so that the
    schema lists every status the API answers."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for code, description in ERROR_STATUSES.items():
                responses.setdefault(code, {"description": description, "content": error})
    return result
