"""Reading a streamed turn from the center: sentences to a callback, then the response.

The center's `.../stream` endpoints answer with server-sent events (see
jarvis.protocol.events): `sentence` events are handed to the caller's `on_sentence` as
they arrive (text-to-speech starts on the first while the rest is still being written),
and `done` carries the same `ToolCallingResponse` the plain endpoint returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from jarvis.protocol import (
    SentenceEvent,
    StreamErrorEvent,
    ToolCallingResponse,
    parse_events,
)

__all__ = ["SentenceHandler", "StreamedTurnError", "read_turn"]

# Receives each sentence of the spoken answer as soon as the center sends it.
SentenceHandler = Callable[[str], None]


class StreamedTurnError(Exception):
    """The stream broke the protocol, or the center reported a failure in it."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


def read_turn(lines: Iterable[str], on_sentence: SentenceHandler) -> ToolCallingResponse:
    """The turn's response, once every sentence before it went to `on_sentence`."""
    try:
        for name, data in parse_events(lines):
            if name == "sentence":
                on_sentence(SentenceEvent.model_validate(data).text)
            elif name == "done":
                return ToolCallingResponse.model_validate(data)
            elif name == "error":
                error = StreamErrorEvent.model_validate(data)
                raise StreamedTurnError(error.error, error.status)
            # `tool_calls` comes again in `done`, which is what the node acts on.
    except ValueError as exc:  # JSON that does not parse, or a model that does not fit
        raise StreamedTurnError(f"the center's event stream is not the protocol: {exc}") from exc
    raise StreamedTurnError("the center's event stream ended before its `done` event")
