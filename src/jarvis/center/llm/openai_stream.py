"""A streamed chat completion (`"stream": true`) put back together, chunk by chunk.

An OpenAI-compatible server streams server-sent events, one `data:` line per chunk:
`{"choices": [{"delta": {"content": "Hel"}}]}`, tool calls as pieces keyed by `index`
(`{"index": 0, "id": ..., "function": {"name": ..., "arguments": "{\\"ci"}}`), the usage
in a last chunk when the server sends one, then `data: [DONE]`.
"""

from __future__ import annotations

import json
from typing import Any

from jarvis.center.llm.base import LLMBadResponseError, LLMReply, LLMToolCall

__all__ = ["StreamedReply"]


class StreamedReply:
    """Reads the `data:` lines of a streamed completion; `reply()` is the whole answer."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._calls: dict[int, dict[str, str]] = {}
        self._usage: dict[str, Any] = {}
        self.finished = False

    def line(self, line: str) -> str:
        """Take one line of the event stream; the text it adds to the answer ("" if none)."""
        if not line.startswith("data:"):
            return ""  # event names, comments, blank separators
        data = line[5:].strip()
        if data == "[DONE]":
            self.finished = True
            return ""
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise LLMBadResponseError("a streamed chunk is not JSON") from exc
        if not isinstance(chunk, dict):
            raise LLMBadResponseError("a streamed chunk is not an object")
        if chunk.get("error"):
            raise LLMBadResponseError(f"the server reported an error: {chunk['error']}")
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        return self._delta(chunk)

    def _delta(self, chunk: dict[str, Any]) -> str:
        choices = chunk.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        delta = first.get("delta") if isinstance(first, dict) else None
        if not isinstance(delta, dict):
            return ""
        for index, piece in enumerate(delta.get("tool_calls") or []):
            self._call_piece(piece, index)
        content = delta.get("content")
        if content is None:
            return ""
        if not isinstance(content, str):
            raise LLMBadResponseError("delta.content is not text")
        self._content.append(content)
        return content

    def _call_piece(self, piece: Any, position: int) -> None:
        if not isinstance(piece, dict):
            raise LLMBadResponseError("a streamed tool call is not an object")
        index = piece.get("index", position)
        call = self._calls.setdefault(index if isinstance(index, int) else position,
                                      {"id": "", "name": "", "arguments": ""})
        function = piece.get("function") if isinstance(piece.get("function"), dict) else {}
        call["id"] = call["id"] or str(piece.get("id") or "")
        call["name"] += str(function.get("name") or "")
        arguments = function.get("arguments") or ""
        call["arguments"] += arguments if isinstance(arguments, str) else json.dumps(arguments)

    def reply(self) -> LLMReply:
        """The answer as one reply (as `complete` would have returned it)."""
        calls = []
        for index in sorted(self._calls):
            call = self._calls[index]
            if not call["name"]:
                raise LLMBadResponseError(f"streamed tool call {index} has no function name")
            calls.append(LLMToolCall(call["id"], call["name"], call["arguments"] or "{}"))
        content = "".join(self._content) if self._content else None
        return LLMReply(content=content, tool_calls=calls, usage=self._usage)
