"""Throttles of the endpoints that check a credential (passwords through Basic auth on the token
endpoints, the enrolment secret): counted per client address BEFORE authentication, so that a
wrong guess is counted too. DRF's own throttles run after authentication, which answers a wrong
password with 401 first and would let guessing go on unthrottled.

The rate is REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["credentials"] (FARM_CREDENTIAL_RATE).
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle


class CredentialThrottle(SimpleRateThrottle):
    """Per client address, whoever the request claims to be."""

    scope = "credentials"

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)  # read now, not at import

    def get_cache_key(self, request: Request, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class ThrottledBeforeAuthentication:
    """View mixin: CredentialThrottle runs before authentication."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        throttle = CredentialThrottle()
        if not throttle.allow_request(request, self):
            self.throttled(request, throttle.wait())  # type: ignore[attr-defined]
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
