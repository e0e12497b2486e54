"""The read API: nodes, conversations and their turns as JSON (admin token required)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from jarvis.center.auth import AdminAccess, NodeKeys
from jarvis.center.console.redact import Redactor
from jarvis.center.console.turns import describe_turns
from jarvis.center.store.reads import Reader
from jarvis.protocol import API_PREFIX, ErrorResponse

__all__ = ["MAX_PAGE", "load_turns", "read_api", "registered_nodes"]

MAX_PAGE = 500

OffLoop = Callable[[Callable[[], Any]], Awaitable[Any]]

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "Missing or wrong admin token"},
    403: {"model": ErrorResponse, "description": "No admin token configured: the API is off"},
    422: {"model": ErrorResponse, "description": "Bad query parameters"},
}


def load_turns(reader: Reader, conversation_id: str, limit: int, offset: int) -> list[Any]:
    """Turns `offset`..`offset+limit` told for people (the turn before gives node timing)."""
    if offset == 0:
        return describe_turns(reader.turns(conversation_id, limit, 0))
    rows = reader.turns(conversation_id, limit + 1, offset - 1)
    return describe_turns(rows[1:], rows[0]) if rows else []


def _public_conversation(found: dict[str, Any]) -> dict[str, Any]:
    context = found["node_context"]
    return {
        "id": found["id"],
        "node_id": context.get("node_id"),
        "room": context.get("room"),
        "timezone": context.get("timezone"),
        "created_at": found["created_at"],
        "updated_at": found["updated_at"],
        "waiting_for": (found["pending"] or {}).get("kind"),
        "turn_count": found["turn_count"],
        "commands": [c.get("command_name") for c in found["available_commands"] or []]
        or [(t.get("function") or t).get("name") for t in found["client_tools"]],
    }


def registered_nodes(keys: NodeKeys) -> list[dict[str, Any]]:
    """The nodes given a key (never the key): name, created, last seen, revoked."""
    return [{"name": n.name, "created_at": n.created_at, "last_seen_at": n.last_seen_at,
             "revoked_at": n.revoked_at, "revoked": n.revoked} for n in keys.list()]


def read_api(
    reader: Reader, keys: NodeKeys, access: AdminAccess, redact: Redactor, off_loop: OffLoop
) -> APIRouter:
    """The `/api/v0` read routes."""
    router = APIRouter(prefix=API_PREFIX, tags=["read"], responses=_ERRORS)

    def respond(data: Any) -> Response:
        text = json.dumps(jsonable_encoder(data), ensure_ascii=False)
        return Response(redact(text), media_type="application/json")

    @router.get("/nodes")
    async def nodes(request: Request) -> Response:
        """Every node that started a conversation, most recently seen first (`nodes`), and
        every node given a key (`registered`)."""
        access.bearer(request)
        return respond({"nodes": await off_loop(reader.nodes),
                        "registered": await off_loop(lambda: registered_nodes(keys))})

    @router.get("/conversations")
    async def conversations(
        request: Request,
        node: str | None = Query(None, min_length=1, max_length=200,
                                 description="Only this node's conversations"),
        limit: int = Query(50, ge=1, le=MAX_PAGE),
        offset: int = Query(0, ge=0, le=10**9),
    ) -> Response:
        """Conversation summaries, newest first, one page at a time."""
        access.bearer(request)
        page = await off_loop(lambda: reader.conversations(node, limit, offset))
        return respond({"conversations": page.items, "total": page.total, "limit": limit,
                        "offset": offset, "next_offset": page.next_offset})

    @router.get("/conversations/{conversation_id}", responses={404: {"model": ErrorResponse}})
    async def conversation(
        request: Request,
        conversation_id: str = Path(min_length=1, max_length=200),
        limit: int = Query(100, ge=1, le=MAX_PAGE, description="Turns per page"),
        offset: int = Query(0, ge=0, le=10**9),
    ) -> Response:
        """One conversation with its turns (oldest first) and their traces."""
        access.bearer(request)
        found = await off_loop(lambda: reader.conversation(conversation_id))
        if found is None:
            raise HTTPException(404, f"unknown conversation '{conversation_id}'")
        turns = await off_loop(lambda: load_turns(reader, conversation_id, limit, offset))
        after = offset + len(turns)
        return respond({**_public_conversation(found), "turns": turns, "limit": limit,
                        "offset": offset,
                        "next_offset": after if after < found["turn_count"] else None})

    return router
