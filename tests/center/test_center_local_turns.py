"""`local_turns` on /voice/command: what the node answered itself, as history (scripted LLM)."""

from __future__ import annotations

import json
from typing import Any

from center_helpers import CALCULATOR_COMMAND, WEATHER_TOOL, conversation_id

from jarvis.center.llm.base import LLMReply, LLMRequest
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.local_turns import FOLLOW_UP_NOTE
from jarvis.protocol.models import MAX_LOCAL_JSON, MAX_LOCAL_TURNS

FIVE_PLUS_THREE: dict[str, Any] = {
    "voice_command": "what's 5 plus 3",
    "tool_name": "calculate",
    "arguments": {"num1": 5.0, "num2": 3.0, "operation": "add"},
    "output": {"success": True, "message": "5 plus 3 is 8.",
               "context": {"result": 8.0, "expression": "5 plus 3"}, "wait_for_input": True},
    "assistant_message": "5 plus 3 is 8.",
}


def _post(center: Any, cid: str, text_: str, local_turns: Any) -> Any:
    return center.client.post(
        "/api/v0/voice/command",
        json={"conversation_id": cid, "voice_command": text_, "local_turns": local_turns},
    )


def _after_local(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation messages from the local exchange on (system prompts left out)."""
    start = next(i for i, m in enumerate(messages) if m.get("content") == "what's 5 plus 3")
    return [m for m in messages[start:] if m["role"] != "system"]


def test_local_turns_come_before_the_utterance_as_a_normal_history(make_center: Any) -> None:
    def multiply(request: LLMRequest) -> LLMReply:
        return tool_call("calculate", num1=8, num2=2, operation="multiply")

    backend = ScriptedBackend([multiply, text("And 16 plus 1 is 17.")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[CALCULATOR_COMMAND])

    response = _post(center, cid, "now multiply that by 2", [FIVE_PLUS_THREE])

    assert response.status_code == 200, response.text
    assert response.json()["tool_calls"][0]["function"]["name"] == "calculate"
    user, call, result, spoken, follow_up = _after_local(backend.requests[0].messages)
    assert user == {"role": "user", "content": "what's 5 plus 3"}
    [made] = call["tool_calls"]
    assert made["function"]["name"] == "calculate"
    assert json.loads(made["function"]["arguments"]) == FIVE_PLUS_THREE["arguments"]
    assert result["role"] == "tool" and result["tool_call_id"] == made["id"]
    assert json.loads(result["content"]) == {
        "success": True, "message": "5 plus 3 is 8.",
        "context": {"result": 8.0, "expression": "5 plus 3"},
    }
    assert spoken == {"role": "assistant", "content": "5 plus 3 is 8."}
    assert follow_up == {"role": "user", "content": "now multiply that by 2"}
    messages = backend.requests[0].messages
    note = messages.index({"role": "user", "content": "now multiply that by 2"}) - 1
    assert messages[note] == {"role": "system", "content": FOLLOW_UP_NOTE}

    # Stored once with the conversation: the next utterance reads it from the history.
    assert _post(center, cid, "and add one", None).status_code == 200
    history = json.dumps(backend.requests[1].messages)
    assert history.count("what's 5 plus 3") == 1


def test_bad_local_turns_are_422_naming_the_field(make_center: Any) -> None:
    center = make_center(ScriptedBackend([]))
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL], commands=[CALCULATOR_COMMAND])

    def turn(**changes: Any) -> dict[str, Any]:
        return {**FIVE_PLUS_THREE, **changes}

    cases: list[tuple[Any, str]] = [
        ({"tool_name": "calculate"}, "local_turns"),
        ([turn(tool_name="calc ulate; rm -rf")], "local_turns.0.tool_name"),
        ([turn(tool_name="x" * 65)], "local_turns.0.tool_name"),
        ([turn(voice_command="")], "local_turns.0.voice_command"),
        ([turn(voice_command="la " * 2000)], "local_turns.0.voice_command"),
        ([{k: v for k, v in FIVE_PLUS_THREE.items() if k != "output"}], "local_turns.0.output"),
        ([turn(arguments=["not", "an", "object"])], "local_turns.0.arguments"),
        ([turn(arguments={"blob": "x" * MAX_LOCAL_JSON})], "local_turns.0.arguments"),
        ([turn(output={"success": True, "context": {"blob": "y" * MAX_LOCAL_JSON}})],
         "local_turns.0.output"),
        ([turn()] * (MAX_LOCAL_TURNS + 1), "local_turns"),
        # A tool this conversation never registered, or one of the center's own.
        ([turn(), turn(tool_name="get_weather")], "local_turns.1.tool_name"),
        ([turn(tool_name="ask_user")], "local_turns.0.tool_name"),
    ]
    for local_turns, field in cases:
        response = _post(center, cid, "now multiply that by 2", local_turns)
        assert response.status_code == 422, (local_turns, response.text)
        assert field in response.json()["error"], response.text
    # NaN is not JSON, although Python's parser lets it through.
    body = json.dumps({"conversation_id": cid, "voice_command": "now multiply that by 2",
                       "local_turns": [turn(arguments={"num1": float("nan")})]})
    response = center.client.post("/api/v0/voice/command", content=body.encode(),
                                  headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert "local_turns.0.arguments" in response.json()["error"]
    # None of that touched the conversation.
    assert center.store.load(cid).message_count == 0
