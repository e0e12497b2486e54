"""Every built-in command: discoverable, a sane tool schema, examples that fit its parameters."""

from __future__ import annotations

import json
from typing import Any

import pytest
from command_helpers import builtin_commands

from jarvis.sdk import IJarvisCommand

EXPECTED = {
    "calculate": {"num1", "num2", "operation"},
    "set_timer": {"duration", "label"},
    "check_timers": set(),
    "cancel_timer": {"label", "all_timers"},
    "get_current_time": {"location", "day"},
    "convert_measurement": {"value", "from_unit", "to_unit"},
    "reminder": {"action", "text", "resolved_datetimes", "time"},
    "todo_list": {"action", "items"},
    "shopping_list": {"action", "items"},
    "tell_joke": {"topic"},
    "roll_dice": {"count", "sides"},
    "get_weather": {"city", "resolved_datetimes", "unit"},
    "control_device": {"action", "entity", "brightness"},
    "music": {"action", "query", "volume"},
}
JSON_TYPES = {"string", "integer", "number", "boolean", "object", "array"}


COMMANDS = builtin_commands()
IDS = [c.command_name for c in COMMANDS]


def test_every_expected_command_is_discovered_once() -> None:
    assert sorted(IDS) == sorted(EXPECTED)


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_tool_schema_shape(command: IJarvisCommand) -> None:
    schema = command.to_openai_tool_schema()
    json.dumps(schema)  # must be plain JSON
    function = schema["function"]
    assert function["name"] == command.command_name
    assert function["name"].isidentifier() and function["name"].islower()
    assert len(function["description"]) > 20
    params = function["parameters"]
    assert params["type"] == "object"
    assert set(params["properties"]) == EXPECTED[command.command_name]
    assert set(params["required"]) <= set(params["properties"])
    assert len(params["properties"]) <= 5  # small models choke on more
    for name, prop in params["properties"].items():
        assert prop["type"] in JSON_TYPES, name
        assert prop.get("description"), f"{name} has no description"
        if "enum" in prop:
            assert prop["type"] == "string" and prop["enum"]
            assert all(isinstance(v, str) for v in prop["enum"])
        if prop["type"] == "array":
            assert prop["items"]["type"] in JSON_TYPES


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_command_schema_has_guidance(command: IJarvisCommand) -> None:
    full = command.get_command_schema()
    json.dumps(full)
    assert full["examples"], "needs examples"
    assert sum(1 for e in full["examples"] if e["is_primary"]) == 1
    assert full["keywords"]
    assert full["allow_direct_answer"] is False
    for antipattern in full["antipatterns"]:
        assert antipattern["command_name"] in EXPECTED
        assert antipattern["command_name"] != command.command_name


def _check_example(command: IJarvisCommand, expected: dict[str, Any]) -> None:
    declared = {p.name: p for p in command.parameters}
    for p in command.parameters:
        if p.required:
            assert p.name in expected, f"required {p.name} missing"
    for name, value in expected.items():
        param = declared[name]
        assert param.type.check(value) is None, f"{name}={value!r}: {param.type.check(value)}"
        ok, message = param.validate(value)
        assert ok, message


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_examples_fit_the_parameters(command: IJarvisCommand) -> None:
    for example in command.examples:
        _check_example(command, example.expected_parameters)
        # and the small-model fixes leave correct arguments as they are
        fixed = command.post_process_tool_call(dict(example.expected_parameters),
                                               example.voice_command)
        _check_example(command, fixed)
        assert fixed == example.expected_parameters


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_pre_route_ignores_unrelated_utterances(command: IJarvisCommand) -> None:
    for text in ("what is the capital of France", "tell me about the roman empire",
                 "how are you today", ""):
        assert command.pre_route(text) is None
