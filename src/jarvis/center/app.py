"""The command center's HTTP API (FastAPI): thin routes over the engine."""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from jarvis.center.auth import NodeAuth, NodeKeyGate, NodeKeys, request_node
from jarvis.center.console import mount_console
from jarvis.center.conversation_errors import (
    BadRequestError,
    ConflictError,
    ConversationNotFoundError,
    MalformedRequestError,
)
from jarvis.center.engine import Engine, EngineConfig
from jarvis.center.limits import BodySizeLimit
from jarvis.center.llm import create_backend
from jarvis.center.llm.base import LLMBackend
from jarvis.center.local_turns import LocalTurnError
from jarvis.center.meaning import load_relatedness
from jarvis.center.metrics import CenterMetrics, RequestMetrics
from jarvis.center.ratelimit import RateLimit, RateLimitedError, RateLimiter
from jarvis.center.retention import Retention
from jarvis.center.settings import CenterSettings, load_settings
from jarvis.center.store import Store
from jarvis.center.streaming import mount_streaming
from jarvis.protocol import (
    API_PREFIX,
    ContinueRequest,
    ConversationStartRequest,
    ConversationStartResponse,
    ErrorResponse,
    ToolCallingResponse,
    VoiceCommandRequest,
    WhoAmIResponse,
)

__all__ = ["create_app"]

log = logging.getLogger(__name__)

WORKER_THREADS = 32

# The routes only nodes call; each needs a node key (unless insecure_no_auth).
NODE_PATHS = frozenset(
    f"{API_PREFIX}{path}"
    for path in ("/conversation/start", "/voice/command", "/voice/command/continue",
                 "/voice/command/stream", "/voice/command/continue/stream", "/whoami")
)

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "The request does not fit the conversation"},
    401: {"model": ErrorResponse, "description": "Missing, invalid or revoked node key"},
    404: {"model": ErrorResponse, "description": "Unknown conversation (or another node's)"},
    409: {"model": ErrorResponse, "description": "Changed by a concurrent request"},
    413: {"model": ErrorResponse, "description": "Body too large"},
    422: {"model": ErrorResponse, "description": "Malformed body"},
    429: {"model": ErrorResponse, "description": "Over the node's rate limit (see Retry-After)"},
}


def _json(model: Any, status: int = 200) -> Response:
    return Response(model.model_dump_json(), status_code=status, media_type="application/json")


def _error(
    status: int, message: str, detail: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = ErrorResponse(error=message, detail=detail).model_dump()
    return JSONResponse(body, status_code=status, headers=headers)


def _field(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc if p != "body"]
    return ".".join(parts) or "body"


def _build_engine(
    settings: CenterSettings, store: Store, backend: LLMBackend, metrics: CenterMetrics
) -> Engine:
    """The engine over `store` and `backend`, tuned by the settings."""
    return Engine(
        store,
        backend,
        EngineConfig(
            max_retries=settings.max_retries,
            max_tool_loops=settings.max_tool_loops,
            direct_tool_message=settings.direct_tool_message,
            history_messages=settings.history_messages,
            llm_timeout=settings.llm_timeout,
            llm_max_tokens=settings.llm_max_tokens,
            digits_for_numbers=settings.digits_for_numbers,
        ),
        on_turn=metrics.observe_turn,
        limiter=RateLimiter(RateLimit(settings.rate_limit_per_minute, settings.rate_limit_burst)),
        relatedness=load_relatedness(settings.relatedness),
    )


def _lifespan(
    workers: ThreadPoolExecutor,
    retention: Retention,
    store: Store,
    backend: LLMBackend,
    owns_backend: bool,
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """Load the center's own model in the background at the start; sweep old conversations
    while the app runs; close what the center opened at the end."""

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if owns_backend:
            _load_in_background(backend)
        sweeping = asyncio.create_task(retention.run())
        yield
        sweeping.cancel()
        with suppress(asyncio.CancelledError):
            await sweeping
        workers.shutdown(wait=True)
        retention.close()
        store.close()
        close = getattr(backend, "close", None)
        if owns_backend and callable(close):
            close()

    return lifespan


def _load_in_background(backend: LLMBackend) -> None:
    """Read a backend's model (embedded) now, beside the center's start and the node's
    first requests, so the first answer does not wait for it; a failure is logged here and
    reported by the first request, as without this."""
    load = getattr(backend, "load", None)
    if not callable(load):
        return

    def run() -> None:
        try:
            load()
        except Exception as exc:
            log.info("the language model was not loaded in advance: %s", exc)

    threading.Thread(target=run, name="llm-load", daemon=True).start()


def _add_middleware(
    app: FastAPI,
    settings: CenterSettings,
    store: Store,
    metrics: CenterMetrics,
    off_loop_call: Callable[[Callable[[], Any]], Awaitable[Any]],
) -> None:
    """Body size limit, the node key gate (unless auth is off), then request metrics."""
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    if not settings.insecure_no_auth:
        app.add_middleware(NodeKeyGate, auth=NodeAuth(NodeKeys(store)), paths=NODE_PATHS,
                           run=off_loop_call)
    else:
        log.warning("node authentication is OFF (insecure_no_auth): any local program may "
                    "use this center")
    # Outermost: refusals of the key gate are counted too.
    app.add_middleware(RequestMetrics, metrics=metrics)


def _register_error_handlers(app: FastAPI) -> None:
    """Answer every refusal, the framework's and the engine's, with `ErrorResponse`."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        problems = [f"{_field(e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in errors]
        detail = [
            {"field": _field(e.get("loc", ())), "message": e.get("msg"), "type": e.get("type")}
            for e in errors
        ]
        return _error(422, "invalid request: " + "; ".join(problems), detail)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # The framework's own refusals (an unknown path or method, a body it cannot parse)
        # speak the same error model as the center's; an unreadable body is malformed (422).
        if exc.status_code == 400 and exc.__cause__ is not None:
            reason = f"{exc.detail} ({type(exc.__cause__).__name__})"
            return _error(422, f"invalid request: body: {reason}",
                          [{"field": "body", "message": reason}])
        return _error(exc.status_code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(ConversationNotFoundError)
    async def _not_found(_request: Request, exc: ConversationNotFoundError) -> JSONResponse:
        return _error(404, str(exc), {"conversation_id": exc.conversation_id})

    @app.exception_handler(MalformedRequestError)
    async def _malformed(_request: Request, exc: MalformedRequestError) -> JSONResponse:
        return _error(422, f"invalid request: {exc}", [{"field": exc.field, "message": str(exc)}])

    @app.exception_handler(LocalTurnError)
    async def _bad_local_turn(_request: Request, exc: LocalTurnError) -> JSONResponse:
        return _error(422, f"invalid request: {exc}", [{"field": exc.field, "message": str(exc)}])

    @app.exception_handler(BadRequestError)
    async def _bad(_request: Request, exc: BadRequestError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(RateLimitedError)
    async def _too_many(_request: Request, exc: RateLimitedError) -> JSONResponse:
        wait = max(1, math.ceil(exc.retry_after))
        return _error(429, str(exc), {"node_id": exc.node or None, "retry_after": wait},
                      headers={"Retry-After": str(wait)})

    @app.exception_handler(ConflictError)
    async def _conflict(_request: Request, exc: ConflictError) -> JSONResponse:
        return _error(409, str(exc))


def _mount_conversation_routes(
    app: FastAPI,
    engine: Engine,
    store: Store,
    backend: LLMBackend,
    off_loop: Callable[..., Awaitable[Any]],
) -> None:
    """`/health` and the non-streamed routes nodes converse through."""

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "llm_backend": getattr(backend, "name", type(backend).__name__),
            "database": store.dialect,
        }

    @app.post(
        f"{API_PREFIX}/conversation/start",
        response_model=ConversationStartResponse,
        responses=_ERRORS,
    )
    async def start(body: ConversationStartRequest, request: Request) -> Response:
        """Register the node's tools for a conversation (again: replace them, keep history)."""
        await off_loop(engine.start, body, request_node(request))
        return _json(ConversationStartResponse(conversation_id=body.conversation_id))

    @app.post(f"{API_PREFIX}/voice/command", response_model=ToolCallingResponse, responses=_ERRORS)
    async def voice_command(body: VoiceCommandRequest, request: Request) -> Response:
        """A new utterance; answers with tool calls, a question, or the spoken reply."""
        return _json(await off_loop(engine.command, body, request_node(request)))

    @app.post(
        f"{API_PREFIX}/voice/command/continue",
        response_model=ToolCallingResponse,
        responses=_ERRORS,
    )
    async def voice_continue(body: ContinueRequest, request: Request) -> Response:
        """Tool results or the user's answer to a clarification question."""
        return _json(await off_loop(engine.continue_, body, request_node(request)))

    @app.get(f"{API_PREFIX}/whoami", response_model=WhoAmIResponse, responses=_ERRORS)
    async def whoami(request: Request) -> Response:
        """The node this key belongs to (what `jarvis node login` checks)."""
        node = request_node(request)
        return _json(WhoAmIResponse(node=node, authenticated=node is not None))


def create_app(
    settings: CenterSettings | None = None, backend: LLMBackend | None = None
) -> FastAPI:
    """Build the center: store (migrated), backend, engine, routes."""
    settings = settings or load_settings()
    owns_backend = backend is None
    backend = backend or create_backend(settings)
    store = Store(settings.resolved_database_url(), durable_commits=settings.durable_commits)
    metrics = CenterMetrics(str(getattr(backend, "name", type(backend).__name__)))
    engine = _build_engine(settings, store, backend, metrics)
    retention = Retention(store, settings.retention_days, settings.retention_interval)

    # Engine calls block (LLM, database): they run on these threads, never on the event loop.
    # A plain executor: cheaper per call than anyio's thread pool.
    workers = ThreadPoolExecutor(max_workers=WORKER_THREADS, thread_name_prefix="center")

    async def off_loop(function: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(workers, function, *args)

    async def off_loop_call(function: Callable[[], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(workers, function)

    app = FastAPI(
        lifespan=_lifespan(workers, retention, store, backend, owns_backend),
        title="Jarvis command center",
        version="0",
        description="Conversation API between Jarvis nodes and the command center.",
    )
    app.state.settings = settings
    app.state.store = store
    app.state.engine = engine
    app.state.backend = backend
    app.state.retention = retention
    _add_middleware(app, settings, store, metrics, off_loop_call)
    mount_console(app, settings, store, engine, backend, metrics, off_loop_call)
    _register_error_handlers(app)
    _mount_conversation_routes(app, engine, store, backend, off_loop)
    mount_streaming(app, engine, workers, _ERRORS)
    return app
