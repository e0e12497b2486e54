"""The OpenAI-style messages a turn writes into its conversation: the assistant's tool
calls and the tools' results."""

from __future__ import annotations

import json
import uuid
from typing import Any

from jarvis.center.llm.base import LLMToolCall

__all__ = ["MAX_TOOL_CONTENT", "assistant_tool_message", "new_call_id", "tool_message",
           "unique_ids"]

# Longest tool result (JSON text) put into the prompt; a small model has a small context.
MAX_TOOL_CONTENT = 8_000


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:16]}"


def assistant_tool_message(calls: list[LLMToolCall], content: str | None) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ],
    }


def tool_message(call_id: str, name: str, payload: Any) -> dict[str, Any]:
    content = json.dumps(payload, ensure_ascii=False, default=str)
    if len(content) > MAX_TOOL_CONTENT:
        content = content[:MAX_TOOL_CONTENT] + " ...(truncated)"
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def unique_ids(calls: list[LLMToolCall]) -> list[LLMToolCall]:
    """Give every call a distinct, non-empty id (some servers repeat or omit them)."""
    seen: set[str] = set()
    out = []
    for call in calls:
        call_id = call.id if call.id and call.id not in seen else new_call_id()
        seen.add(call_id)
        out.append(LLMToolCall(call_id, call.name, call.arguments or "{}"))
    return out
