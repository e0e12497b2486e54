"""What a streamed turn tells the node before its response: the tool calls, and the spoken
answer sentence by sentence.

The engine feeds a `TurnEvents` the answer's text while the LLM writes it (`text`) and
the turn's response once it is stored (`finish`). Sentences leave as soon as they are
complete; whatever of the answer was not sent yet (all of it, for an answer that had to
be checked whole) leaves at `finish`. The events go to `emit(name, data)`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from jarvis.center.sentences import SentenceCutter, split_sentences
from jarvis.protocol import ToolCallingResponse

__all__ = ["Emit", "TurnEvents"]

log = logging.getLogger(__name__)

# Receives one event: its name and its JSON data.
Emit = Callable[[str, dict[str, Any]], None]


class TurnEvents:
    """The events of one turn, in order; thread-safe (the LLM may write on its own thread)."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._cutter = SentenceCutter()
        self._live: list[str] = []
        self._lock = threading.Lock()
        self._listening = True

    def text(self, piece: str) -> None:
        """A piece of the answer as the LLM writes it; complete sentences leave at once."""
        with self._lock:
            if not self._listening or not piece:
                return
            self._live.append(piece)
            for sentence in self._cutter.feed(piece):
                self._emit("sentence", {"text": sentence})

    def stop_listening(self) -> str:
        """No more pieces (the LLM call is over); the text received, as one string."""
        with self._lock:
            self._listening = False
            return "".join(self._live)

    def finish(self, response: ToolCallingResponse) -> None:
        """The stored turn's response: its tool calls, or the rest of its spoken answer."""
        self.stop_listening()
        if response.stop_reason == "tool_calls" and response.tool_calls:
            calls = [call.model_dump(mode="json") for call in response.tool_calls]
            self._emit("tool_calls", {"tool_calls": calls})
        elif response.stop_reason == "complete" and response.assistant_message:
            for sentence in split_sentences(self._unsent(response.assistant_message)):
                self._emit("sentence", {"text": sentence})

    def _unsent(self, message: str) -> str:
        """The part of `message` after the sentences already sent."""
        sent = self._cutter.consumed.strip()
        if message.startswith(sent):
            return message[len(sent):]
        # Cannot happen while backends keep their promise (pieces join to the answer).
        log.warning("the streamed sentences are not the start of the answer; sending it all")
        return message
