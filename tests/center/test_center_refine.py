"""Refinable follow-ups over real HTTP with the scripted LLM backend (protocol tests): the
center repeats the last call with the changed value and keeps the other arguments."""

from __future__ import annotations

import json
from typing import Any

from center_helpers import conversation_id, function_tool

from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call

THERMOSTAT = function_tool("set_thermostat", {
    "room": {"type": "string", "description": "Which room"},
    "temperature": {"type": "integer", "minimum": 10, "maximum": 30, "_refinable": True},
    "mode": {"type": "string", "enum": ["heat", "cool"], "_refinable": True},
}, required=["room", "temperature"], description="Set a room's thermostat.")
JOKE = function_tool("tell_joke", {}, description="Tell a joke.")


def _first_turn(center: Any, cid: str) -> None:
    """'set the den to 20 degrees' ran set_thermostat(room=den, temperature=20)."""
    center.start(cid, [THERMOSTAT, JOKE])
    reply = center.command(cid, "set the den to 20 degrees")
    [call] = reply["tool_calls"]
    done = center.results(cid, (call["id"], {"success": True, "message": "Den set to 20."}))
    assert done["stop_reason"] == "complete"


def _call(reply: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    assert reply["stop_reason"] == "tool_calls", reply
    [call] = reply["tool_calls"]
    return call["function"]["name"], json.loads(call["function"]["arguments"])


def test_a_follow_up_changes_one_refinable_value_and_keeps_the_rest(make_center: Any) -> None:
    backend = ScriptedBackend([
        tool_call("set_thermostat", room="den", temperature=20),
        # The focused decision: only what the new words change.
        tool_call("set_thermostat", mode="cool"),
    ])
    center, cid = make_center(backend), conversation_id()
    _first_turn(center, cid)
    name, arguments = _call(center.command(cid, "actually make it cool"))
    assert (name, arguments) == ("set_thermostat", {"room": "den", "temperature": 20,
                                                    "mode": "cool"})
    focused = backend.requests[-1]
    assert [t["function"]["name"] for t in focused.tools] == ["set_thermostat"]
    assert set(focused.tools[0]["function"]["parameters"]["properties"]) == {
        "temperature", "mode"}
    assert not focused.allow_direct_answer
    assert '"room": "den"' in focused.messages[0]["content"]
    assert focused.messages[-1] == {"role": "user", "content": "actually make it cool"}
    trace = center.store.turns(cid)[-1]["trace"]
    assert trace["refined"] == {"tool": "set_thermostat", "changed": {"mode": "cool"}}
    assert trace["llm_calls"][0]["focused"] is True


def test_a_step_is_worked_out_without_the_llm_and_never_asked_for(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("set_thermostat", room="den", temperature=20)])
    center, cid = make_center(backend), conversation_id()
    _first_turn(center, cid)
    # 22 was never said: a tenth of 10..30 up from 20, carried rather than asked for.
    name, arguments = _call(center.command(cid, "a bit warmer"))
    assert (name, arguments) == ("set_thermostat", {"room": "den", "temperature": 22})
    assert len(backend.requests) == 1


def test_a_chain_of_follow_ups_refines_the_latest_call(make_center: Any) -> None:
    backend = ScriptedBackend([
        tool_call("set_thermostat", room="den", temperature=20),
        tool_call("set_thermostat", temperature=25),
    ])
    center, cid = make_center(backend), conversation_id()
    _first_turn(center, cid)
    reply = center.command(cid, "actually make it 25")
    assert _call(reply) == ("set_thermostat", {"room": "den", "temperature": 25})
    center.results(cid, (reply["tool_calls"][0]["id"], {"success": True, "message": "OK."}))
    _, arguments = _call(center.command(cid, "now 3 degrees colder"))
    assert arguments == {"room": "den", "temperature": 22}


def test_words_that_change_nothing_go_the_usual_way(make_center: Any) -> None:
    backend = ScriptedBackend([
        tool_call("set_thermostat", room="den", temperature=20),
        # "and thank you": the focused decision changes nothing, then the usual path.
        tool_call("set_thermostat", temperature=20),
        text("You're welcome!"),
    ])
    center, cid = make_center(backend), conversation_id()
    _first_turn(center, cid)
    thanks = center.command(cid, "and thank you")
    assert thanks["stop_reason"] == "complete"
    assert not backend.requests[1].allow_direct_answer
    assert backend.requests[2].allow_direct_answer  # the usual prompt
    cid = conversation_id()
    backend.add(tool_call("set_thermostat", room="den", temperature=20), tool_call("tell_joke"))
    _first_turn(center, cid)
    name, arguments = _call(center.command(cid, "and what about a joke"))
    assert (name, arguments) == ("tell_joke", {})
    assert backend.requests[-1].allow_direct_answer


def test_a_failed_call_is_not_refined(make_center: Any) -> None:
    backend = ScriptedBackend([
        tool_call("set_thermostat", room="den", temperature=20),
        tool_call("set_thermostat", room="den", temperature=21),
    ])
    center, cid = make_center(backend), conversation_id()
    center.start(cid, [THERMOSTAT, JOKE])
    [call] = center.command(cid, "set the den to 20 degrees")["tool_calls"]
    center.results(cid, (call["id"], {"success": False, "message": "The den has no thermostat."}))
    center.command(cid, "actually the den 21 degrees")
    assert backend.requests[-1].allow_direct_answer  # the usual prompt


def test_a_refined_call_the_node_never_ran_is_not_refined_again(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("set_thermostat", room="den", temperature=20),
                               text("Which temperature?")])
    center, cid = make_center(backend), conversation_id()
    _first_turn(center, cid)
    _call(center.command(cid, "a bit warmer"))
    # The user moved on before the node answered: that call did not run, so it is no base.
    assert center.command(cid, "and warmer still")["stop_reason"] == "complete"
    assert backend.requests[-1].allow_direct_answer


def test_a_second_clock_time_is_said_too(make_center: Any) -> None:
    alarm = function_tool("set_alarm", {
        "label": {"type": "string"},
        "time": {"type": "string", "format": "time", "_refinable": True}})
    backend = ScriptedBackend([tool_call("set_alarm", label="gym", time="17:00"),
                               tool_call("set_alarm", time="18:00")])
    center, cid = make_center(backend), conversation_id()
    center.start(cid, [alarm])
    [call] = center.command(cid, "set a gym alarm at 5 pm")["tool_calls"]
    center.results(cid, (call["id"], {"success": True, "message": "Alarm set."}))
    # "at 5 pm" and "6 pm" in one conversation: each is a time said, 18:00 is kept.
    assert _call(center.command(cid, "actually make it 6 pm")) == (
        "set_alarm", {"label": "gym", "time": "18:00"})
