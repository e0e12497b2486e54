"""The events of a streamed turn (`POST .../stream`), as server-sent events.

In order: `sentence` events (the spoken answer, one sentence each, as soon as each is
ready) or one `tool_calls` event (the validated calls), then `done` with exactly the body
the non-streaming endpoint returns. A failure once the stream has begun is an `error`
event with the HTTP status the non-streaming endpoint would have answered and its body.
On the wire each event is `event: <name>` and `data: <JSON>` lines, then a blank line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, Literal

from pydantic import Field

from jarvis.protocol.models import ErrorResponse, ToolCall, _Model

__all__ = [
    "EVENT_STREAM",
    "EventName",
    "SentenceEvent",
    "StreamErrorEvent",
    "ToolCallsEvent",
    "format_event",
    "parse_events",
]

EVENT_STREAM = "text/event-stream"

EventName = Literal["sentence", "tool_calls", "done", "error"]


class SentenceEvent(_Model):
    """One sentence of the spoken answer, ready to be spoken."""

    text: str


class ToolCallsEvent(_Model):
    """The tool calls of the turn, validated: the same list `done` carries."""

    tool_calls: list[ToolCall]


class StreamErrorEvent(ErrorResponse):
    """A failure after the stream began: the status the plain endpoint would answer."""

    status: int = Field(ge=400, le=599)


def format_event(name: str, data: dict[str, Any]) -> bytes:
    """One event in the wire format (JSON holds no raw line breaks, so one data line)."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def parse_events(lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """(name, JSON data) of each event in the lines of an event stream.

    Follows the format's rules that matter here: `:` starts a comment, several `data`
    lines join with line breaks, an event without a name is a `message`.
    """
    name, data = "", []
    for line in lines:
        if not line:
            if data:
                yield name or "message", json.loads("\n".join(data))
            name, data = "", []
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    if data:
        yield name or "message", json.loads("\n".join(data))
