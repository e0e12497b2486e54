"""A refined call names the call it changes (`refines`), over real HTTP with the scripted
LLM backend (protocol tests): the node then changes what that call made."""

from __future__ import annotations

import json
from typing import Any

from center_helpers import conversation_id, function_tool

from jarvis.center.llm.scripted import ScriptedBackend, tool_call

TIMER = function_tool("set_timer", {
    "duration": {"type": "string", "format": "duration", "_refinable": True},
    "label": {"type": "string"},
}, required=["duration"], description="Start a countdown timer.")
THERMOSTAT = function_tool("set_thermostat", {
    "room": {"type": "string"},
    "temperature": {"type": "integer", "minimum": 10, "maximum": 30, "_refinable": True},
}, required=["room", "temperature"], description="Set a room's thermostat.")


def _ran(center: Any, cid: str, reply: dict[str, Any]) -> dict[str, Any]:
    """The one call of `reply`, reported as run."""
    assert reply["stop_reason"] == "tool_calls", reply
    [call] = reply["tool_calls"]
    done = center.results(cid, (call["id"], {"success": True, "message": "Done."}))
    assert done["stop_reason"] == "complete"
    return call


def test_a_refined_call_names_the_call_it_changes(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("set_timer", duration="PT10M"),
                               tool_call("set_timer", duration="PT20M")])
    center, cid = make_center(backend), conversation_id()
    center.start(cid, [TIMER])
    first = _ran(center, cid, center.command(cid, "set a timer for 10 minutes"))
    assert first.get("refines") is None  # a new request changes nothing
    second = _ran(center, cid, center.command(cid, "actually make it 20 minutes"))
    assert second["refines"] == first["id"] and second["id"] != first["id"]
    # A chain names the latest call: the one that holds the change now.
    third = center.command(cid, "5 minutes longer")["tool_calls"][0]
    assert json.loads(third["function"]["arguments"]) == {"duration": "PT25M"}
    assert third["refines"] == second["id"]


def test_a_refinement_retried_after_a_bad_value_still_names_the_call(make_center: Any) -> None:
    backend = ScriptedBackend([
        tool_call("set_thermostat", room="den", temperature=20),
        tool_call("set_thermostat", temperature=99),  # the focused call, misread: out of range
        tool_call("set_thermostat", room="den", temperature=25),  # the retry
    ])
    center, cid = make_center(backend), conversation_id()
    center.start(cid, [THERMOSTAT])
    first = _ran(center, cid, center.command(cid, "set the den to 20 degrees"))
    reply = center.command(cid, "actually make it 25")
    [call] = reply["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"room": "den", "temperature": 25}
    assert call["refines"] == first["id"]
    retry = "\n".join(str(m.get("content")) for m in backend.requests[-1].messages)
    assert "parameter 'temperature': 99 is above the maximum of 30" in retry
    assert "a number from 10 to 30" in retry


def test_a_fast_path_call_is_refined_by_the_node_s_own_id(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("set_timer", duration="PT20M")])
    center, cid = make_center(backend), conversation_id()
    center.start(cid, [TIMER])
    turn = {"voice_command": "set a timer for 10 minutes", "tool_name": "set_timer",
            "tool_call_id": "local-1a2b3c", "arguments": {"duration": "PT10M"},
            "output": {"success": True, "message": "Timer set for 10 minutes."}}
    response = center.client.post("/api/v0/voice/command", json={
        "conversation_id": cid, "voice_command": "actually make it 20 minutes",
        "local_turns": [turn]})
    assert response.status_code == 200, response.text
    [call] = response.json()["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"duration": "PT20M"}
    assert call["refines"] == "local-1a2b3c"
