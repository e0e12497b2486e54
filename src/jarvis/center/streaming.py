"""Streamed turns over HTTP: `POST /api/v0/voice/command/stream` and
`POST /api/v0/voice/command/continue/stream`, the same bodies as the plain endpoints,
answered as server-sent events (see jarvis.protocol.events).

The engine runs the turn exactly as for the plain endpoint, on a worker thread, handing
its events to this module through a queue. Nothing is sent until the first event: a
request the plain endpoint refuses (404, 422, 429, ...) gets that same plain JSON error.
A failure after the first event (a 409 when the turn is stored) is an `error` event with
the status and body the plain endpoint would have answered.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor
from contextlib import suppress
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel

from jarvis.center.auth import request_node
from jarvis.center.engine import Engine
from jarvis.center.turn_events import TurnEvents
from jarvis.protocol import (
    API_PREFIX,
    EVENT_STREAM,
    ContinueRequest,
    SentenceEvent,
    StreamErrorEvent,
    ToolCallingResponse,
    ToolCallsEvent,
    VoiceCommandRequest,
    format_event,
)

__all__ = ["mount_streaming"]

log = logging.getLogger(__name__)

_FAILED = "failed"  # a queue item's name for an exception raised by the turn
Turn = Callable[[TurnEvents], ToolCallingResponse]

_EXAMPLE = (
    'event: sentence\ndata: {"text": "It\'s 73 degrees and sunny in Miami."}\n\n'
    'event: sentence\ndata: {"text": "Enjoy the beach!"}\n\n'
    'event: done\ndata: {"commands": [], "request_information": {...}, '
    '"stop_reason": "complete", "assistant_message": "It\'s 73 degrees and sunny in Miami. '
    'Enjoy the beach!", "tool_calls": null, "validation_request": null}\n\n'
)


class EventStreamResponse(StreamingResponse):
    media_type = EVENT_STREAM


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s JSON schema, its nested models referred to in the OpenAPI components."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    schema.pop("$defs", None)  # ToolCall and its parts are components already
    return schema


def _event(name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"properties": {
        "event": {"const": name},
        "data": {"type": "string", "contentMediaType": "application/json",
                 "contentSchema": data}}}


def _documented(errors: dict[int | str, dict[str, Any]]) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI responses: each event described (`itemSchema`), refusals as plain JSON."""
    events = {
        "type": "object",
        "required": ["event", "data"],
        "properties": {"event": {"type": "string"}, "data": {"type": "string"}},
        "oneOf": [
            _event("sentence", _schema(SentenceEvent)),
            _event("tool_calls", _schema(ToolCallsEvent)),
            _event("done", {"$ref": "#/components/schemas/ToolCallingResponse"}),
            _event("error", _schema(StreamErrorEvent)),
        ],
    }
    stream = {
        "description": "Events `sentence` / `tool_calls`, then `done` with the plain "
                       "endpoint's body, or `error` with the plain endpoint's status and "
                       "error body; see docs/api.md.",
        "content": {EVENT_STREAM: {"itemSchema": events, "example": _EXAMPLE}},
    }
    # Refusals are the plain endpoint's JSON errors, not events.
    plain = {status: {"description": doc["description"], "content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/ErrorResponse"}}}}
        for status, doc in errors.items()}
    return {200: stream, **plain}


def mount_streaming(
    app: FastAPI, engine: Engine, workers: Executor, errors: dict[int | str, dict[str, Any]]
) -> None:
    """Add the streaming variants of `/voice/command` and `/voice/command/continue`."""
    # response_class=Response: the stream's content is all in `responses`, none implied.
    responses = _documented(errors)

    @app.post(f"{API_PREFIX}/voice/command/stream", response_class=Response,
              response_model=None, responses=responses)
    async def voice_command_stream(body: VoiceCommandRequest, request: Request) -> Response:
        """`/voice/command` as server-sent events: sentences as they are ready, then `done`."""
        node = request_node(request)
        return await _stream(request, workers,
                             lambda events: engine.command(body, node, events=events))

    @app.post(f"{API_PREFIX}/voice/command/continue/stream", response_class=Response,
              response_model=None, responses=responses)
    async def voice_continue_stream(body: ContinueRequest, request: Request) -> Response:
        """`/voice/command/continue` as server-sent events (the answer after tool results
        streams while the LLM words it)."""
        node = request_node(request)
        return await _stream(request, workers,
                             lambda events: engine.continue_(body, node, events=events))


async def _stream(request: Request, workers: Executor, turn: Turn) -> Response:
    """Run `turn` on a worker; a plain error if it fails before its first event."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def put(name: str, data: Any) -> None:
        with suppress(RuntimeError):  # the server is shutting down: nobody listens
            loop.call_soon_threadsafe(queue.put_nowait, (name, data))

    def run() -> None:
        try:
            response = turn(TurnEvents(put))
        except Exception as exc:  # raised on the loop: the app's handlers answer it
            put(_FAILED, exc)
        else:
            put("done", response.model_dump(mode="json"))

    loop.run_in_executor(workers, run)
    first = await queue.get()
    if first[0] == _FAILED:
        raise first[1]
    # no-cache and no proxy buffering: each event must reach the node when it is sent.
    return EventStreamResponse(_events(request, first, queue),
                               headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def _events(
    request: Request, first: tuple[str, Any], queue: asyncio.Queue[tuple[str, Any]]
) -> AsyncIterator[bytes]:
    """The events in wire format, up to `done` or `error`."""
    name, data = first
    while True:
        if name == _FAILED:
            yield format_event("error", await _error_body(request, data))
            return
        yield format_event(name, data)
        if name == "done":
            return
        name, data = await queue.get()


async def _error_body(request: Request, exc: Exception) -> dict[str, Any]:
    """The status and body the app's own handler gives `exc` (500 when none handles it)."""
    handlers = request.app.exception_handlers
    handler = next((handlers[cls] for cls in type(exc).__mro__ if cls in handlers), None)
    if handler is None:
        log.error("a streamed turn failed", exc_info=exc)
        return {"status": 500, "error": "internal error", "detail": None}
    answer = await handler(request, exc)
    return {"status": answer.status_code, **json.loads(bytes(answer.body))}
