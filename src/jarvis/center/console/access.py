"""The admin token guarding the console and the read API.

`JARVIS_ADMIN_TOKEN` (setting `admin_token`) turns both on. It is sent as
`Authorization: Bearer <token>`, or once through the console's login form, after which
a cookie holds a keyed digest of the token (never the token itself).
"""

from __future__ import annotations

import hashlib
import hmac

from fastapi import Request

__all__ = ["COOKIE", "AdminAccess", "AdminAuthError", "ConsoleOffError"]

COOKIE = "jarvis_console"

OFF_MESSAGE = (
    "the console and the read API are off: set JARVIS_ADMIN_TOKEN (setting admin_token) "
    "on the center to turn them on"
)


class ConsoleOffError(PermissionError):
    """No admin token is configured (403)."""

    def __init__(self) -> None:
        super().__init__(OFF_MESSAGE)


class AdminAuthError(PermissionError):
    """The admin token is missing or wrong (401)."""


class AdminAccess:
    """Checks requests against the configured admin token (None: everything is off)."""

    def __init__(self, token: str | None) -> None:
        self._token = token or None

    @property
    def enabled(self) -> bool:
        return self._token is not None

    def _require_enabled(self) -> str:
        if self._token is None:
            raise ConsoleOffError()
        return self._token

    def cookie_value(self) -> str:
        """What the login cookie holds: a digest keyed by the token, useless without it."""
        token = self._require_enabled()
        return hmac.new(token.encode(), b"jarvis-console-login", hashlib.sha256).hexdigest()

    def token_matches(self, candidate: str) -> bool:
        token = self._require_enabled()
        return hmac.compare_digest(candidate.encode(), token.encode())

    def bearer(self, request: Request) -> None:
        """The read API: a Bearer token, nothing else."""
        self._require_enabled()
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            raise AdminAuthError("missing admin token: send Authorization: Bearer <token>")
        if not self.token_matches(given.strip()):
            raise AdminAuthError("wrong admin token")

    def logged_in(self, request: Request) -> bool:
        """The console: a Bearer token, or the cookie the login form set."""
        self._require_enabled()
        if request.headers.get("authorization"):
            self.bearer(request)
            return True
        cookie = request.cookies.get(COOKIE, "")
        return bool(cookie) and hmac.compare_digest(cookie, self.cookie_value())
