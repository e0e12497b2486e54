"""Reading a streamed turn from a running center, event by event as it arrives."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from center_helpers import Center

from jarvis.protocol import parse_events

COMMAND = "/api/v0/voice/command/stream"
CONTINUE = "/api/v0/voice/command/continue/stream"


@contextmanager
def open_stream(
    center: Center, path: str, body: dict[str, Any]
) -> Iterator[tuple[httpx.Response, Iterator[tuple[str, Any]]]]:
    """The response (status, headers) and its events, read only as the test asks for them."""
    with center.client.stream("POST", path, json=body) as response:
        yield response, parse_events(response.iter_lines())


def stream(center: Center, path: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every event of a streamed turn (the answer must be a stream)."""
    with open_stream(center, path, body) as (response, events):
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return list(events)


def command_body(conversation_id: str, text: str) -> dict[str, Any]:
    return {"conversation_id": conversation_id, "voice_command": text}


def results_body(conversation_id: str, *results: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"conversation_id": conversation_id,
            "tool_results": [{"tool_call_id": i, "output": o} for i, o in results]}


def answer_body(conversation_id: str, text: str) -> dict[str, Any]:
    return {"conversation_id": conversation_id, "validation_response": text}
