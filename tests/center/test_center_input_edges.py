"""Inputs at the edge of the API: each gets a 4xx in the documented error model, never a 500.

Every test runs on SQLite and on PostgreSQL (which cannot store a NUL character at all).
"""

from __future__ import annotations

from typing import Any

import pytest
from center_helpers import WEATHER_TOOL, Center, conversation_id, function_tool

from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call

START = "/api/v0/conversation/start"
COMMAND = "/api/v0/voice/command"
CONTINUE = "/api/v0/voice/command/continue"


def _refused(center: Center, path: str, body: dict[str, Any], status: int = 422) -> str:
    """POST `body`; assert the status and the error model; the error message."""
    response = center.client.post(path, json=body)
    assert response.status_code == status, (body, response.text)
    error = response.json()
    assert set(error) == {"error", "detail"}, error
    return str(error["error"])


@pytest.mark.parametrize(
    "zone", ["America", "A" * 300, "../../etc/passwd", "Europe/Berlin\x00", "", "Mars/Olympus",
             "/etc/localtime"],
)
def test_a_timezone_that_is_no_iana_zone_is_422(make_center: Any, zone: str) -> None:
    center = make_center(ScriptedBackend([]))
    cid = conversation_id()
    start = {"conversation_id": cid, "node_context": {"timezone": zone}}
    error = _refused(center, START, start)
    assert error.startswith("invalid request: node_context.timezone: ")
    assert "unknown IANA timezone" in error and len(error) < 300
    center.start(cid, [WEATHER_TOOL])
    command = {"conversation_id": cid, "voice_command": "hi", "node_context": {"timezone": zone}}
    assert "node_context.timezone" in _refused(center, COMMAND, command)
    assert center.store.load(cid).message_count == 0


@pytest.mark.parametrize(
    ("tool", "complaint"),
    [
        ({"type": "function", "function": {"name": "f", "parameters": [1]}},
         "parameters must be a JSON schema object"),
        ({"type": "function", "function": {"name": "f", "parameters": "a string"}},
         "parameters must be a JSON schema object"),
        ({"type": "function", "function": {"name": "f", "parameters": {"properties": [1]}}},
         "parameters.properties must be an object"),
        ({"type": "function", "function": {"name": "f", "parameters": {"required": "city"}}},
         "parameters.required must be a list of names"),
        ({"type": "function", "function": "get_weather"}, "function must be an object"),
        ({"type": "function", "function": {"name": "f", "description": 5}},
         "description must be text"),
        ({"type": "function", "function": {"name": 5}}, "needs function.name"),
    ],
)
def test_a_client_tool_of_the_wrong_shape_is_422(make_center: Any, tool: dict[str, Any],
                                                 complaint: str) -> None:
    center = make_center(ScriptedBackend([]))
    cid = conversation_id()
    error = _refused(center, START, {"conversation_id": cid, "client_tools": [tool]})
    assert error.startswith("invalid request: client_tools: ") and complaint in error
    assert center.store.load(cid) is None


def test_odd_property_schemas_are_typed_loosely_not_refused(make_center: Any) -> None:
    center = make_center(ScriptedBackend([text("Fine.")]))
    cid = conversation_id()
    tool = function_tool("f", {"a": {"type": {"x": 1}, "description": 7}, "b": True})
    center.start(cid, [tool])
    assert center.command(cid, "hello")["assistant_message"] == "Fine."


@pytest.mark.parametrize("bad", ["\x00", "\x1b[31m", "\x07", "\x7f", "\x85"])
def test_control_characters_in_ids_and_text_are_422(make_center: Any, bad: str) -> None:
    center = make_center(ScriptedBackend([tool_call("open_weather_command", city="Oslo")]))
    cid = conversation_id()
    assert "conversation_id" in _refused(center, START, {"conversation_id": f"a{bad}b"})
    node = {"timezone": "UTC", "room": f"kitchen{bad}"}
    assert "node_context.room" in _refused(center, START,
                                           {"conversation_id": cid, "node_context": node})
    center.start(cid, [WEATHER_TOOL])
    cases = [
        (COMMAND, {"conversation_id": f"{cid}{bad}", "voice_command": "hi"}, "conversation_id"),
        (COMMAND, {"conversation_id": cid, "voice_command": f"weather{bad}"}, "voice_command"),
        (CONTINUE, {"conversation_id": cid, "validation_response": f"yes{bad}"},
         "validation_response"),
        (CONTINUE, {"conversation_id": cid, "tool_results": [
            {"tool_call_id": f"call{bad}", "output": {"success": True}}]},
         "tool_results.0.tool_call_id"),
    ]
    for path, body, field in cases:
        error = _refused(center, path, body)
        assert error.startswith(f"invalid request: {field}: "), error
        assert "control characters" in error
    assert center.store.load(cid).message_count == 0
    # Line breaks and tabs are ordinary text.
    reply = center.command(cid, "weather in\tOslo\nplease")
    assert reply["stop_reason"] == "tool_calls"


def test_text_that_is_no_unicode_is_422(make_center: Any) -> None:
    center = make_center(ScriptedBackend([]))
    cid = conversation_id()
    # A lone surrogate, anywhere in the body, is text no database or LLM can take.
    tool = '{"type": "function", "function": {"name": "f", "description": "caf\\ud800"}}'
    raw = f'{{"conversation_id": "{cid}", "client_tools": [{tool}]}}'
    response = center.client.post(START, content=raw.encode(),
                                  headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert "client_tools.0.function.description" in response.json()["error"]
    # Bytes that are not UTF-8 at all.
    response = center.client.post(COMMAND, content=b'{"conversation_id": "\xff"}',
                                  headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert response.json()["error"].startswith("invalid request: body: ")
    assert center.store.load(cid) is None


def test_framework_refusals_follow_the_error_model(make_center: Any) -> None:
    center = make_center(ScriptedBackend([]))
    missing = center.client.get("/api/v0/nothing-here")
    assert missing.status_code == 404 and missing.json() == {"error": "Not Found", "detail": None}
    wrong_method = center.client.get(COMMAND)
    assert wrong_method.status_code == 405 and set(wrong_method.json()) == {"error", "detail"}


def test_a_continue_must_carry_results_or_an_answer(make_center: Any) -> None:
    center = make_center(ScriptedBackend([]))
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    both = {"conversation_id": cid, "tool_results": [], "validation_response": "Oslo"}
    assert "not both" in _refused(center, CONTINUE, both)
    empty = {"conversation_id": cid, "tool_results": []}
    assert "tool_results: must hold at least one result" in _refused(center, CONTINUE, empty)
    blank = {"conversation_id": cid, "validation_response": "  "}
    assert "validation_response: must not be empty" in _refused(center, CONTINUE, blank)
    assert center.store.load(cid).message_count == 0


def test_an_answer_nobody_asked_for_is_400(make_center: Any) -> None:
    backend = ScriptedBackend([
        tool_call("open_weather_command", city="Oslo"),
        text("Sunny in Oslo."),
    ])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    answer = {"conversation_id": cid, "validation_response": "Oslo"}
    error = _refused(center, CONTINUE, answer, status=400)
    assert "no question is waiting" in error and "/api/v0/voice/command" in error
    call = center.command(cid, "weather in oslo")["tool_calls"][0]
    # While tool calls are pending, an answer is refused and the calls stay pending.
    assert "waits for tool_results" in _refused(center, CONTINUE, answer, status=400)
    done = center.results(cid, (call["id"], {"success": True, "context": {"sky": "clear"}}))
    assert done["assistant_message"] == "Sunny in Oslo."
    assert len(backend.requests) == 2  # neither refusal reached the LLM


# 950: about as deep as the JSON parser still takes under the server's stack (its limit
# moves with every ASGI layer); deeper bodies are refused by the parser itself (422).
@pytest.mark.parametrize("depth", [65, 500, 950])
def test_json_nested_too_deep_is_422(make_center: Any, depth: int) -> None:
    center = make_center(ScriptedBackend([tool_call("open_weather_command", city="Oslo")]))
    cid = conversation_id()
    nested = "[" * depth + "]" * depth
    tool = f'{{"type": "function", "function": {{"name": "f", "x": {nested}}}}}'
    raw = f'{{"conversation_id": "{cid}", "client_tools": [{tool}]}}'
    response = center.client.post(START, content=raw.encode(),
                                  headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert "nested deeper than 64 levels" in response.json()["error"]
    center.start(cid, [WEATHER_TOOL])
    call = center.command(cid, "weather in oslo")["tool_calls"][0]
    output = f'{{"success": true, "context": {{"a": {nested}}}}}'
    raw = (f'{{"conversation_id": "{cid}", "tool_results": '
           f'[{{"tool_call_id": "{call["id"]}", "output": {output}}}]}}')
    response = center.client.post(CONTINUE, content=raw.encode(),
                                  headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert "tool_results.0.output.context.a" in response.json()["error"]
    # Ordinary nesting passes, and the calls still wait for their results.
    shallow = {"levels": [[{"deep": [[1]]}]]}
    done = center.results(cid, (call["id"], {"success": True, "message": "ok",
                                             "context": shallow}))
    assert done["stop_reason"] == "complete"
