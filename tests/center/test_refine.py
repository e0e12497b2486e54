"""Refinable follow-ups (center/refine.py) on plain OpenAI tool definitions: no command is
known by name, everything comes from `"_refinable": true` and the conversation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from center_helpers import function_tool

from jarvis.center.llm.base import LLMReply, LLMToolCall
from jarvis.center.refine import (
    PreviousCall,
    focused_messages,
    focused_tool,
    from_arguments,
    previous_call,
    refinement,
    relative_change,
    sounds_like_refinement,
)
from jarvis.center.toolspec import build_catalog

THERMOSTAT = function_tool("set_thermostat", {
    "room": {"type": "string", "description": "Which room"},
    "temperature": {"type": "integer", "minimum": 10, "maximum": 30, "_refinable": True},
    "mode": {"type": "string", "enum": ["heat", "cool"], "_refinable": True},
}, required=["room", "temperature"])
OVEN = function_tool("bake", {
    "minutes": {"type": "integer", "description": "Baking time in minutes", "_refinable": True},
    "length": {"type": "string", "format": "duration"},
})
SPEAKER = function_tool("speaker", {"level": {"type": "integer", "_refinable": True}})
PLAIN = function_tool("send_text", {"to": {"type": "string"}})
TOOLS = build_catalog([THERMOSTAT, OVEN, SPEAKER, PLAIN], None).tools


def _exchange(name: str, arguments: dict[str, Any], success: bool = True) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "earlier words"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}]},
        {"role": "tool", "tool_call_id": "c1", "name": name,
         "content": json.dumps({"success": success})},
        {"role": "assistant", "content": "Done."},
    ]


def test_the_refinable_flag_reaches_the_catalog_from_either_form() -> None:
    assert [p.name for p in TOOLS["set_thermostat"].params.values() if p.refinable] == [
        "temperature", "mode"]
    command = {"command_name": "lamp", "parameters": [
        {"name": "level", "type": "int", "refinable": True}, {"name": "room"}]}
    [spec] = build_catalog([], [command]).tools.values()
    assert spec.params["level"].refinable and not spec.params["room"].refinable
    assert spec.schema["function"]["parameters"]["properties"]["level"]["_refinable"] is True


def test_the_previous_call_is_the_one_successful_call_of_the_last_exchange() -> None:
    found = previous_call(_exchange("set_thermostat", {"room": "den", "temperature": 20}), TOOLS)
    assert found == PreviousCall("set_thermostat", {"room": "den", "temperature": 20}, "c1")
    assert previous_call(_exchange("set_thermostat", {"room": "den"}, success=False),
                         TOOLS) is None
    # A tool without refinable parameters, or a later exchange without a call.
    assert previous_call(_exchange("send_text", {"to": "Ann"}), TOOLS) is None
    later = [*_exchange("speaker", {"level": 3}), {"role": "user", "content": "hi"},
             {"role": "assistant", "content": "Hello!"}]
    assert previous_call(later, TOOLS) is None
    assert previous_call([], TOOLS) is None


@pytest.mark.parametrize("words, expected", [
    ("actually make it 20 minutes", True), ("and in Fahrenheit", True),
    ("what about tomorrow", True), ("make it louder", True), ("Paris instead", True),
    ("how about 22", True), ("in Celsius", True), ("same for tomorrow", True),
    ("thanks", False), ("tell me a joke", False),
    ("what's the time", False),
    # One more of a kind is a request of its own.
    ("and another one for 10 minutes for the rice", False), ("and a second timer", False),
])
def test_what_reads_as_a_change_of_the_last_request(words: str, expected: bool) -> None:
    assert sounds_like_refinement(words) is expected


def test_a_step_uses_the_amount_said_else_a_tenth_of_the_bounds() -> None:
    spec, before = TOOLS["set_thermostat"], PreviousCall(
        "set_thermostat", {"room": "den", "temperature": 20})
    warmer = relative_change("make it warmer", spec, before)
    assert warmer is not None and warmer.arguments == {"room": "den", "temperature": 22}
    assert warmer.carried == {"room", "temperature"}
    colder = relative_change("3 degrees colder", spec, before)
    assert colder is not None and colder.arguments["temperature"] == 17
    # Clamped to the schema's bounds.
    top = relative_change("warmer", spec, PreviousCall("set_thermostat", {"temperature": 29}))
    assert top is not None and top.arguments["temperature"] == 30
    # "to 25" sets a value: no step (the LLM reads it).
    assert relative_change("turn it up to 25", spec, before) is None
    assert relative_change("what about the kitchen", spec, before) is None


def test_a_step_of_a_number_counted_in_a_unit_of_time() -> None:
    before = PreviousCall("bake", {"minutes": 30})
    longer = relative_change("make it 10 minutes longer", TOOLS["bake"], before)
    assert longer is not None and longer.arguments == {"minutes": 40}
    shorter = relative_change("half an hour less", TOOLS["bake"], before)
    assert shorter is not None and shorter.arguments == {"minutes": 0}


def test_a_step_nothing_bounds_leaves_the_value_to_the_command() -> None:
    found = relative_change("louder", TOOLS["speaker"], PreviousCall("speaker", {"level": 4}))
    assert found is not None and found.arguments == {} and found.changed == {"level": None}
    # No previous value: no step to take.
    assert relative_change("louder", TOOLS["speaker"], PreviousCall("speaker", {})) is None


def test_a_previous_value_that_is_no_number_takes_no_step() -> None:
    timer = build_catalog([function_tool("timer", {
        "length": {"type": "string", "format": "duration", "_refinable": True}})], None).tools
    for spec, before in ((TOOLS["speaker"], {"level": True}), (TOOLS["speaker"], {"level": "4"}),
                         (timer["timer"], {"length": "soon"})):
        name = spec.name
        found = relative_change("5 minutes longer", spec, PreviousCall(name, before))
        assert found is not None and found.arguments == {}, found  # left to the command
    longer = relative_change("5 minutes longer", timer["timer"],
                             PreviousCall("timer", {"length": "PT10M"}))
    assert longer is not None and longer.arguments == {"length": "PT15M"}


def test_the_focused_decision_sees_the_previous_call_and_only_refinable_parameters() -> None:
    tool = focused_tool(TOOLS["set_thermostat"])
    parameters = tool["function"]["parameters"]
    assert set(parameters["properties"]) == {"temperature", "mode"}
    assert "required" not in parameters
    system, user = focused_messages(
        PreviousCall("set_thermostat", {"room": "den", "temperature": 20}), "and cool it")
    assert '{"room": "den", "temperature": 20}' in system["content"]
    assert user == {"role": "user", "content": "and cool it"}


def test_only_changed_refinable_values_make_a_refinement() -> None:
    spec = TOOLS["set_thermostat"]
    before = PreviousCall("set_thermostat", {"room": "den", "temperature": 20})
    found = from_arguments(spec, before, {"mode": "cool", "temperature": 20, "room": "attic"})
    assert found is not None
    assert found.arguments == {"room": "den", "temperature": 20, "mode": "cool"}
    assert found.changed == {"mode": "cool"} and found.carried == {"room", "temperature"}
    assert from_arguments(spec, before, {"temperature": 20}) is None
    assert from_arguments(spec, before, {}) is None


def test_a_number_said_alone_keeps_the_unit_of_the_length_it_changes() -> None:
    timer = function_tool("start_timer", {
        "duration": {"type": "string", "format": "duration", "_refinable": True}},
        required=["duration"])
    spec = build_catalog([timer], None).tools["start_timer"]
    before = PreviousCall("start_timer", {"duration": "PT10M"})
    # "make it 20" after 10 minutes: 20 minutes follows from what was said.
    found = from_arguments(spec, before, {"duration": "PT20M"}, "actually make it 20")
    assert found is not None and found.carried == {"duration"}
    # Any other length is the model's reading, checked against the words like any value.
    for other in ("PT20S", "PT30M"):
        found = from_arguments(spec, before, {"duration": other}, "actually make it 20")
        assert found is not None and found.carried == frozenset()
    hours = PreviousCall("start_timer", {"duration": "PT1H30M"})
    found = from_arguments(spec, hours, {"duration": "PT2H"}, "make it 2")
    assert found is not None and found.carried == {"duration"}


def test_a_value_the_words_gave_another_parameter_is_no_change() -> None:
    convert = function_tool("convert", {
        "value": {"type": "number", "_refinable": True}, "from_unit": {"type": "string"},
        "to_unit": {"type": "string", "_refinable": True}})
    weather = function_tool("weather", {"city": {"type": "string", "_refinable": True},
                                        "day": {"type": "string", "format": "date",
                                                "_refinable": True}})
    tools = build_catalog([convert, weather], None).tools
    before = PreviousCall("convert", {"value": 10, "from_unit": "km", "to_unit": "miles"})
    # "and 25 km": km is the unit converted from, not the one to.
    found = from_arguments(tools["convert"], before, {"value": 25, "to_unit": "KM"})
    assert found is not None and found.arguments == {"value": 25, "from_unit": "km",
                                                     "to_unit": "miles"}
    # "what about tomorrow": a date, no city.
    city = PreviousCall("weather", {"city": "London"})
    found = from_arguments(tools["weather"], city, {"city": "Tomorrow", "day": "2026-01-15"})
    assert found is not None and found.arguments == {"city": "London", "day": "2026-01-15"}
    assert from_arguments(tools["weather"], city, {"city": "6 pm"}) is None


def test_refinement_asks_the_llm_only_when_no_step_was_said() -> None:
    asked: list[Any] = []

    def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> LLMReply:
        asked.append(tools)
        return LLMReply(tool_calls=[LLMToolCall("x", "set_thermostat", '{"mode": "cool"}')])

    history = _exchange("set_thermostat", {"room": "den", "temperature": 20})
    found = refinement(history, TOOLS, "actually make it cool", ask=ask,
                       names_another=lambda _: False)
    assert found is not None and found.arguments["mode"] == "cool" and len(asked) == 1
    stepped = refinement(history, TOOLS, "a bit warmer", ask=ask, names_another=lambda _: False)
    assert stepped is not None and stepped.arguments["temperature"] == 22 and len(asked) == 1
    # Another command named, or no change in the words: the usual path.
    assert refinement(history, TOOLS, "and text Ann", ask=ask,
                      names_another=lambda _: True) is None
    assert refinement(history, TOOLS, "thank you", ask=ask,
                      names_another=lambda _: False) is None
    assert len(asked) == 1
