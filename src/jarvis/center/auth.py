"""Who may call the center: nodes with their keys, people with the admin token.

A node key and the admin token are high-entropy random tokens. The center keeps only a
SHA-256 digest of each (a fast hash is enough: nothing can be guessed from 256 random
bits) and compares digests with `hmac.compare_digest`. Both travel as
`Authorization: Bearer <token>`; the console's login form sets a cookie holding a digest
keyed by the admin token's digest, never the token itself.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from jarvis.center.store import Store
from jarvis.center.store.node_keys import NodeRecord, NodeTable
from jarvis.protocol import ErrorResponse

__all__ = [
    "ADMIN_TOKEN_PREFIX", "COOKIE", "AdminAccess", "AdminAuthError", "ConsoleOffError",
    "NodeAuth", "NodeAuthError", "NodeKeyGate", "NodeKeys", "bearer_token", "check_no_auth_bind",
    "hash_token", "is_loopback", "new_token", "request_node",
]

log = logging.getLogger(__name__)

COOKIE = "jarvis_console"
NODE_KEY_PREFIX = "jnk_"
ADMIN_TOKEN_PREFIX = "jat_"
# A node seen again within this many seconds is not written down again (one write a minute).
LAST_SEEN_EVERY = 60.0

OFF_MESSAGE = (
    "the console and the read API are off: set JARVIS_ADMIN_TOKEN (setting admin_token) "
    "on the center, or start it with `jarvis serve` once to generate one"
)


def new_token(prefix: str = NODE_KEY_PREFIX) -> str:
    """A fresh random token (256 bits); the prefix tells a node key from an admin token."""
    return prefix + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The hex SHA-256 digest kept in place of a token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def bearer_token(authorization: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    scheme, _, given = authorization.partition(" ")
    given = given.strip()
    return given if scheme.lower() == "bearer" and given else None


def is_loopback(host: str) -> bool:
    """Whether binding to `host` keeps the center on this machine."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_no_auth_bind(no_auth: bool, host: str) -> None:
    """Refuse to serve without authentication on an address other machines can reach."""
    if no_auth and not is_loopback(host):
        raise ValueError(
            f"insecure_no_auth is only allowed on a loopback address, not {host}: every "
            "machine on the network could use the center; add node keys instead "
            "(jarvis nodes add NAME)"
        )


# --- nodes ---------------------------------------------------------------------------------
class NodeAuthError(PermissionError):
    """A node request without a valid key (401)."""


class NodeKeys:
    """Node keys of one store: create (the key is returned once), list, revoke, check."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.table = NodeTable(store.engine)

    def add(self, name: str, replace: bool = False) -> str:
        """A new key for node `name`; only its digest is stored, so show it now or lose it."""
        name = name.strip()
        if not name or len(name) > 200 or not name.isprintable():
            raise ValueError("a node name is 1 to 200 printable characters")
        key = new_token(NODE_KEY_PREFIX)
        self.table.add(name, hash_token(key), replace=replace)
        return key

    def revoke(self, name: str) -> bool:
        return self.table.revoke(name)

    def list(self) -> list[NodeRecord]:
        return self.table.list()

    def node_for(self, key: str) -> str | None:
        """The name of the node holding this valid (unrevoked) key, or None."""
        digest = hash_token(key)
        found = self.store.node_for_key_hash(digest)
        if found is None:
            return None
        name, stored, revoked = found
        # Found through an index; the digests are compared in constant time all the same.
        return name if hmac.compare_digest(stored, digest) and not revoked else None


class NodeAuth:
    """Checks each node request's key; remembers (at most once a minute) when a node was seen."""

    def __init__(self, keys: NodeKeys) -> None:
        self.keys = keys
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def node(self, authorization: str) -> str:
        """The node authenticated by this `Authorization` header; NodeAuthError otherwise."""
        key = bearer_token(authorization)
        if key is None:
            raise NodeAuthError(
                "missing node key: send Authorization: Bearer <key> (create one on the center "
                "with: jarvis nodes add NAME)"
            )
        name = self.keys.node_for(key)
        if name is None:
            raise NodeAuthError("invalid or revoked node key")
        self._saw(name)
        return name

    def _saw(self, name: str) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._seen.get(name, -LAST_SEEN_EVERY) < LAST_SEEN_EVERY:
                return
            self._seen[name] = now
        try:
            self.keys.table.touch(name, datetime.now(UTC))
        except Exception as exc:  # "last seen" is for people: never refuse a request over it
            log.warning("could not record when node %r was seen: %s", name, type(exc).__name__)


# --- the admin token -------------------------------------------------------------------------
class ConsoleOffError(PermissionError):
    """No admin token is configured (403)."""

    def __init__(self) -> None:
        super().__init__(OFF_MESSAGE)


class AdminAuthError(PermissionError):
    """The admin token is missing or wrong (401)."""


@dataclass(frozen=True)
class AdminAccess:
    """Checks requests against the admin token's digest (None: the admin side is off)."""

    token_hash: str | None

    @classmethod
    def from_token(cls, token: str | None) -> AdminAccess:
        return cls(hash_token(token) if token else None)

    @property
    def enabled(self) -> bool:
        return self.token_hash is not None

    def _require_enabled(self) -> str:
        if self.token_hash is None:
            raise ConsoleOffError()
        return self.token_hash

    def cookie_value(self) -> str:
        """What the login cookie holds: a digest keyed by the token's, useless without it."""
        key = self._require_enabled()
        return hmac.new(key.encode(), b"jarvis-console-login", hashlib.sha256).hexdigest()

    def token_matches(self, candidate: str) -> bool:
        expected = self._require_enabled()
        return hmac.compare_digest(hash_token(candidate), expected)

    def bearer(self, request: Request) -> None:
        """The read API: a Bearer token, nothing else."""
        self._require_enabled()
        given = bearer_token(request.headers.get("authorization", ""))
        if given is None:
            raise AdminAuthError("missing admin token: send Authorization: Bearer <token>")
        if not self.token_matches(given):
            raise AdminAuthError("wrong admin token")

    def logged_in(self, request: Request) -> bool:
        """The console: a Bearer token, or the cookie the login form set."""
        self._require_enabled()
        if request.headers.get("authorization"):
            self.bearer(request)
            return True
        cookie = request.cookies.get(COOKIE, "")
        return bool(cookie) and hmac.compare_digest(cookie, self.cookie_value())


# --- the node routes' gate -------------------------------------------------------------------
OffLoop = Callable[[Callable[[], Any]], Awaitable[Any]]


def request_node(request: Request) -> str | None:
    """The node the key gate authenticated for this request; None when authentication is off."""
    return getattr(request.state, "node", None)


class NodeKeyGate:
    """ASGI middleware: a request to a node route without a valid key gets 401 before its
    body is even read, so nothing of it happens; the node's name goes to `request.state.node`.
    """

    def __init__(self, app: ASGIApp, auth: NodeAuth, paths: frozenset[str], run: OffLoop) -> None:
        self.app = app
        self.auth = auth
        self.paths = paths
        self.run = run

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get("authorization", "")
        try:
            node = await self.run(lambda: self.auth.node(header))
        except NodeAuthError as exc:
            body = ErrorResponse(error=str(exc),
                                 detail={"expected": "Authorization: Bearer <node key>"})
            refusal = JSONResponse(body.model_dump(), status_code=401,
                                   headers={"WWW-Authenticate": "Bearer"})
            # The router never ran: the metrics label the refusal with its (known) path.
            scope["route"] = SimpleNamespace(path=scope["path"])
            await refusal(scope, receive, send)
            return
        scope.setdefault("state", {})["node"] = node
        await self.app(scope, receive, send)
