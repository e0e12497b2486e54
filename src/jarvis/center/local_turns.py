"""Exchanges the node answered itself (its fast path), written as ordinary history.

A node that pre-routes "what's 5 plus 3" runs `calculate` without the center. When the
user follows up ("now multiply that by 2"), the node sends that exchange with the voice
command (`VoiceCommandRequest.local_turns`); each one becomes a user message, an assistant
tool call, the tool's result and the spoken answer, so the LLM reads a normal history;
a short note then says that "that" in the follow-up means the previous result.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Container
from typing import Any

from jarvis.protocol import LocalTurn

__all__ = ["FOLLOW_UP_NOTE", "LocalTurnError", "local_turn_messages"]

# Said after the local turns: without it the embedded 0.5B model reads "now multiply that
# by 2" as 5 times 3 (copying the earlier call), with it as 8 times 2.
FOLLOW_UP_NOTE = "In the next message, 'that' or 'it' means the result of the previous answer."


class LocalTurnError(ValueError):
    """A local turn the center cannot use; `field` names the culprit (the API says 422)."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


def local_turn_messages(
    turns: list[LocalTurn] | None,
    known_tools: Container[str],
    heard: Callable[[str], str],
) -> list[dict[str, Any]]:
    """The history messages for `turns`, oldest first; `heard` rewrites what the user said."""
    if not turns:
        return []
    _check_tools(turns, known_tools)
    messages: list[dict[str, Any]] = []
    for turn in turns:
        messages.extend(_turn_messages(turn, heard))
    messages.append({"role": "system", "content": FOLLOW_UP_NOTE})
    return messages


def _check_tools(turns: list[LocalTurn], known_tools: Container[str]) -> None:
    # A call to a tool the LLM was never offered would teach it a name it cannot use.
    for index, turn in enumerate(turns):
        if turn.tool_name not in known_tools:
            raise LocalTurnError(
                f"local_turns.{index}.tool_name",
                f"'{turn.tool_name}' is not a tool of this conversation "
                "(register it with /api/v0/conversation/start)",
            )


def _turn_messages(turn: LocalTurn, heard: Callable[[str], str]) -> list[dict[str, Any]]:
    # The node's own id, when it sent one: a refinement of this call names it.
    call_id = turn.tool_call_id or f"local_{uuid.uuid4().hex[:16]}"
    arguments = json.dumps(turn.arguments, ensure_ascii=False)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": heard(turn.voice_command)},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": turn.tool_name, "arguments": arguments}},
        ]},
        {"role": "tool", "tool_call_id": call_id, "name": turn.tool_name,
         "content": json.dumps(_result_payload(turn), ensure_ascii=False)},
    ]
    spoken = turn.assistant_message or turn.output.message
    if spoken and spoken.strip():
        messages.append({"role": "assistant", "content": spoken.strip()})
    return messages


def _result_payload(turn: LocalTurn) -> dict[str, Any]:
    # The same shape as a tool result the node sends with /voice/command/continue.
    payload: dict[str, Any] = {"success": turn.output.success}
    if turn.output.message:
        payload["message"] = turn.output.message
    if turn.output.context:
        payload["context"] = turn.output.context
    return payload
