"""A scripted LLM backend: replays fixed replies. For protocol tests and demos only.

Each script item is an `LLMReply` or a callable `(LLMRequest) -> LLMReply` (which may
also raise an `LLMError`). Every request is recorded in `.requests`, so a test can
check what the center sent. Running out of replies raises
`LLMBadResponseError("script exhausted")`; `loop=True` starts the script again instead.
`stream` hands a text reply on word by word (`pause` seconds apart), as a model would.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from jarvis.center.llm.base import (
    LLMBadResponseError,
    LLMReply,
    LLMRequest,
    LLMToolCall,
    TextSink,
)

__all__ = ["ScriptItem", "ScriptedBackend", "load_script", "text", "tool_call", "tool_calls"]

ScriptItem = LLMReply | Callable[[LLMRequest], LLMReply]

_ids = itertools.count(1)


def _next_id() -> str:
    return f"call_{next(_ids):06d}"


def tool_call(name: str, /, **arguments: Any) -> LLMReply:
    """A reply holding one tool call with these arguments (JSON-encoded)."""
    return LLMReply(tool_calls=[LLMToolCall(_next_id(), name, json.dumps(arguments))])


def tool_calls(*calls: tuple[str, dict[str, Any]] | tuple[str, str]) -> LLMReply:
    """A reply holding several tool calls; arguments as a dict or as raw JSON text."""
    out = []
    for name, arguments in calls:
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        out.append(LLMToolCall(_next_id(), name, raw))
    return LLMReply(tool_calls=out)


def text(content: str) -> LLMReply:
    """A plain-text reply."""
    return LLMReply(content=content)


class ScriptedBackend:
    """Replays `replies` in order, one per `complete` call, recording every request."""

    name = "scripted"

    def __init__(
        self, replies: Iterable[ScriptItem], loop: bool = False, pause: float = 0.0
    ) -> None:
        self._replies: list[ScriptItem] = list(replies)
        self._loop = loop
        self.pause = pause
        self._position = 0
        self._lock = threading.Lock()
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMReply:
        with self._lock:
            if self._loop and self._replies:
                item = self._replies[self._position % len(self._replies)]
            elif self._position < len(self._replies):
                item = self._replies[self._position]
            else:
                self.requests.append(request)
                raise LLMBadResponseError("script exhausted")
            self._position += 1
            # Looping scripts (benchmarks) would grow without bound, so they keep the last only.
            if self._loop:
                self.requests[:] = [request]
            else:
                self.requests.append(request)
        reply = item(request) if callable(item) else item
        # Fresh call ids per use, so a looping script never repeats an id in a conversation.
        if self._loop and reply.tool_calls:
            reply = LLMReply(
                content=reply.content,
                tool_calls=[LLMToolCall(_next_id(), c.name, c.arguments) for c in reply.tool_calls],
                usage=reply.usage,
            )
        return reply

    def stream(self, request: LLMRequest, on_text: TextSink) -> LLMReply:
        """`complete`, with a text reply's words handed to `on_text` one at a time."""
        reply = self.complete(request)
        if reply.content and not reply.tool_calls:
            for piece in re.findall(r"\s*\S+\s*?(?=\s|$)|\s+$", reply.content):
                time.sleep(self.pause)
                on_text(piece)
        return reply

    def add(self, *items: ScriptItem) -> None:
        """Append more replies to the script."""
        with self._lock:
            self._replies.extend(items)

    @property
    def remaining(self) -> int:
        return max(0, len(self._replies) - self._position)


def load_script(path: Path) -> list[LLMReply]:
    """Read a script file: a JSON list of replies.

    Each item is either a string (a text reply), or an object with `content` and/or
    `tool_calls`, where each tool call is `{"name": ..., "arguments": {...}}`.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the LLM script {path}: {exc}") from exc
    if not isinstance(data, list):
        raise ValueError(f"the LLM script {path} must hold a JSON list of replies")
    replies: list[LLMReply] = []
    for index, item in enumerate(data):
        if isinstance(item, str):
            replies.append(text(item))
            continue
        if not isinstance(item, dict):
            raise ValueError(f"{path}: reply {index} must be a string or an object")
        calls = []
        for call in item.get("tool_calls") or []:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise ValueError(f"{path}: reply {index} has a tool call without a name")
            arguments = call.get("arguments", {})
            raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
            calls.append(LLMToolCall(_next_id(), call["name"], raw))
        replies.append(LLMReply(content=item.get("content"), tool_calls=calls))
    return replies
