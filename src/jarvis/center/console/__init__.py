"""The console (web pages at `/console`), the read API and `/metrics`, mounted on the center."""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from jarvis.center.auth import AdminAccess, AdminAuthError, ConsoleOffError, NodeKeys
from jarvis.center.console.api import read_api
from jarvis.center.console.pages import console_pages
from jarvis.center.console.redact import Redactor
from jarvis.center.engine import Engine
from jarvis.center.llm.base import LLMBackend
from jarvis.center.metrics import CONTENT_TYPE_LATEST, CenterMetrics
from jarvis.center.settings import CenterSettings
from jarvis.center.store import Store
from jarvis.center.store.reads import Reader
from jarvis.protocol import ErrorResponse

__all__ = ["mount_console"]

OffLoop = Callable[[Callable[[], Any]], Awaitable[Any]]


def _refusal(request: Request, status: int, message: str) -> Response:
    """The console's pages answer in HTML, the API in its JSON error model."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if request.url.path.startswith("/console"):
        body = ("<!doctype html><title>Jarvis console</title><h1>Jarvis console</h1>"
                f"<p>{html.escape(message)}</p>")
        return HTMLResponse(body, status_code=status, headers=headers)
    return JSONResponse(ErrorResponse(error=message).model_dump(), status_code=status,
                        headers=headers)


def _admin_access(settings: CenterSettings, keys: NodeKeys) -> AdminAccess:
    """The configured admin token, else the one `jarvis serve` generated (its digest)."""
    if settings.admin_token is not None:
        return AdminAccess.from_token(settings.admin_token.get_secret_value())
    return AdminAccess(keys.table.admin_hash())


def mount_console(
    app: FastAPI, settings: CenterSettings, store: Store, engine: Engine,
    backend: LLMBackend, metrics: CenterMetrics, off_loop: OffLoop,
) -> None:
    """Add the read API, the console pages and `/metrics` to the center's app."""
    keys = NodeKeys(store)
    access = _admin_access(settings, keys)
    redact = Redactor(settings)
    reader = Reader(store.engine)
    app.include_router(read_api(reader, keys, access, redact, off_loop))
    app.include_router(console_pages(reader, keys, engine, backend, access, redact, off_loop))

    @app.exception_handler(ConsoleOffError)
    async def _off(request: Request, exc: ConsoleOffError) -> Response:
        return _refusal(request, 403, str(exc))

    @app.exception_handler(AdminAuthError)
    async def _unauthorized(request: Request, exc: AdminAuthError) -> Response:
        return _refusal(request, 401, str(exc))

    @app.get("/metrics", include_in_schema=False)
    async def prometheus() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)
