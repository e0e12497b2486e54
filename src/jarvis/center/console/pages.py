"""The console's HTML pages, rendered on the server from Jinja templates (no build step)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import ValidationError

from jarvis.center.auth import COOKIE, AdminAccess, NodeKeys
from jarvis.center.console.api import MAX_PAGE, load_turns, registered_nodes
from jarvis.center.console.commands import commands_of
from jarvis.center.console.model_info import model_info
from jarvis.center.console.redact import Redactor
from jarvis.center.console.turns import STAGES
from jarvis.center.engine import Engine
from jarvis.center.llm.base import LLMBackend
from jarvis.center.store.reads import Reader
from jarvis.protocol import ConversationStartRequest, NodeContext, VoiceCommandRequest

__all__ = ["TRY_PREFIX", "console_pages"]

# Conversations started from "Try it" are told apart by their id.
TRY_PREFIX = "console-"
MAX_FORM_BYTES = 16 * 1024

OffLoop = Callable[[Callable[[], Any]], Awaitable[Any]]


def _ms(value: float) -> str:
    """Milliseconds with two decimals below 10 ms, where a fast stage still shows."""
    value = float(value)
    return f"{value:,.2f} ms" if value < 10 else f"{value:,.1f} ms"


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("jarvis.center.console", "templates"),
                      autoescape=select_autoescape(default=True), auto_reload=False)
    env.filters["pretty"] = lambda value: json.dumps(value, indent=2, ensure_ascii=False,
                                                     default=str)
    env.filters["ms"] = _ms
    env.globals["stages"] = STAGES
    env.globals["try_prefix"] = TRY_PREFIX
    return env


async def _form(request: Request) -> dict[str, str]:
    """An urlencoded form's fields (first value of each); a larger body is refused."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        return {}
    fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    return {key: values[0] for key, values in fields.items()}


class _Pages:
    """Renders pages; `page` checks the login first."""

    def __init__(self, access: AdminAccess, redact: Redactor) -> None:
        self.access = access
        self.redact = redact
        self.env = _environment()

    def html(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        text = self.env.get_template(template).render(**context)
        return HTMLResponse(self.redact(text), status_code=status)

    def login_redirect(self, request: Request) -> Response | None:
        """None when the request may see the console; else the way to the login form."""
        if self.access.logged_in(request):
            return None
        return RedirectResponse("/console/login", status_code=303)


def console_pages(
    reader: Reader, keys: NodeKeys, engine: Engine, backend: LLMBackend, access: AdminAccess,
    redact: Redactor, off_loop: OffLoop,
) -> APIRouter:
    """The `/console` routes."""
    router = APIRouter(prefix="/console", include_in_schema=False)
    pages = _Pages(access, redact)
    _login_routes(router, pages)

    @router.get("")
    async def conversations(
        request: Request, node: str | None = Query(None, min_length=1, max_length=200),
        limit: int = Query(50, ge=1, le=MAX_PAGE), offset: int = Query(0, ge=0, le=10**9),
    ) -> Response:
        if (redirect := pages.login_redirect(request)) is not None:
            return redirect
        nodes = await off_loop(reader.nodes)
        page = await off_loop(lambda: reader.conversations(node, limit, offset))
        return pages.html("conversations.html", nodes=nodes, node=node, page=page)

    @router.get("/conversations/{conversation_id}")
    async def conversation(
        request: Request, conversation_id: str = Path(min_length=1, max_length=200),
        limit: int = Query(100, ge=1, le=MAX_PAGE), offset: int = Query(0, ge=0, le=10**9),
    ) -> Response:
        if (redirect := pages.login_redirect(request)) is not None:
            return redirect
        found = await off_loop(lambda: reader.conversation(conversation_id))
        if found is None:
            return pages.html("message.html", 404, title="Not found",
                              message=f"There is no conversation '{conversation_id}'.")
        turns = await off_loop(lambda: load_turns(reader, conversation_id, limit, offset))
        return pages.html("conversation.html", conversation=found, turns=turns,
                          limit=limit, offset=offset)

    @router.get("/commands")
    async def commands(request: Request) -> Response:
        if (redirect := pages.login_redirect(request)) is not None:
            return redirect
        by_node = await off_loop(lambda: _commands_by_node(reader))
        return pages.html("commands.html", by_node=by_node)

    @router.get("/nodes")
    async def nodes(request: Request) -> Response:
        if (redirect := pages.login_redirect(request)) is not None:
            return redirect
        registered = await off_loop(lambda: registered_nodes(keys))
        return pages.html("nodes.html", nodes=registered)

    @router.get("/model")
    async def model(request: Request) -> Response:
        if (redirect := pages.login_redirect(request)) is not None:
            return redirect
        return pages.html("model.html", info=model_info(backend))

    _try_routes(router, pages, reader, engine, off_loop)
    return router


def _commands_by_node(reader: Reader) -> list[dict[str, Any]]:
    out = []
    for node in reader.nodes():
        latest = reader.latest_tools(node["node_id"]) if node["node_id"] is not None else None
        out.append({**node, "commands": commands_of(latest) if latest else []})
    return out


def _login_routes(router: APIRouter, pages: _Pages) -> None:
    @router.get("/login")
    async def login_form(request: Request) -> Response:
        pages.access.cookie_value()  # refuses (403) when the console is off
        return pages.html("login.html", error=None)

    @router.post("/login")
    async def login(request: Request) -> Response:
        token = (await _form(request)).get("token", "")
        if not token or not pages.access.token_matches(token):
            return pages.html("login.html", 401, error="That is not the admin token.")
        response = RedirectResponse("/console", status_code=303)
        response.set_cookie(COOKIE, pages.access.cookie_value(), httponly=True,
                            samesite="strict", path="/console",
                            secure=request.url.scheme == "https")
        return response

    @router.post("/logout")
    async def logout() -> Response:
        response = RedirectResponse("/console/login", status_code=303)
        response.delete_cookie(COOKIE, path="/console")
        return response


def _try_routes(
    router: APIRouter, pages: _Pages, reader: Reader, engine: Engine, off_loop: OffLoop
) -> None:
    @router.get("/try")
    async def try_form(request: Request) -> Response:
        if (redirect := pages.login_redirect(request)) is not None:
            return redirect
        nodes = [n for n in await off_loop(reader.nodes) if n["node_id"] is not None]
        return pages.html("try.html", nodes=nodes, error=None, text="", chosen=None)

    @router.post("/try")
    async def try_it(request: Request) -> Response:
        if (redirect := pages.login_redirect(request)) is not None:
            return redirect
        form = await _form(request)
        node, text = form.get("node", ""), form.get("text", "").strip()
        latest = await off_loop(lambda: reader.latest_tools(node)) if node else None
        nodes = [n for n in await off_loop(reader.nodes) if n["node_id"] is not None]
        if latest is None:
            return pages.html("try.html", 422, nodes=nodes, text=text, chosen=node,
                              error="Choose a node that has registered its commands.")
        try:
            cid = await off_loop(lambda: _try_turn(engine, latest, text))
        except ValidationError as exc:
            problem = "; ".join(str(e.get("msg")) for e in exc.errors())
            return pages.html("try.html", 422, nodes=nodes, text=text, chosen=node,
                              error=f"The request cannot be sent: {problem}")
        return RedirectResponse(f"/console/conversations/{cid}", status_code=303)


def _try_turn(engine: Engine, latest: dict[str, Any], text: str) -> str:
    """One turn with the node's commands in a new conversation; its tool calls are not run."""
    conversation_id = f"{TRY_PREFIX}{uuid.uuid4().hex[:16]}"
    request = VoiceCommandRequest(conversation_id=conversation_id, voice_command=text)
    engine.start(ConversationStartRequest(
        conversation_id=conversation_id,
        node_context=NodeContext(**latest["node_context"]),
        client_tools=latest["client_tools"],
        available_commands=latest["available_commands"],
    ))
    engine.command(request)
    return conversation_id
