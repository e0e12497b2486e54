"""The pure parts of the center: tool type maps, call checks, the prompt, parallel calls."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from center_helpers import CALENDAR_COMMAND, WEATHER_TOOL, conversation_id, function_tool

from jarvis.center.engine import Engine
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_calls
from jarvis.center.prompt import context_message, system_prompt
from jarvis.center.store import Store
from jarvis.center.toolspec import build_catalog, type_from_schema
from jarvis.center.validation import check_call
from jarvis.protocol import (
    ContinueRequest,
    ConversationStartRequest,
    NodeContext,
    ToolOutput,
    ToolResult,
    VoiceCommandRequest,
)
from jarvis.sdk import IJarvisCommand, JarvisParameter


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "integer"}, "int"),
        ({"type": "number"}, "float"),
        ({"type": "boolean"}, "bool"),
        ({"type": "object"}, "dict"),
        ({"type": "string"}, "string"),
        ({"type": "string", "format": "date"}, "date"),
        ({"type": "string", "format": "date-time"}, "datetime"),
        ({"type": "string", "format": "time"}, "time"),
        ({"type": "string", "format": "duration"}, "timedelta"),
        ({"type": "array", "items": {"type": "string", "format": "date-time"}},
         "array<datetime>"),
        ({"type": "array", "items": {"type": "integer"}}, "array<int>"),
        ({"type": "array"}, "array"),
        ({"type": ["string", "null"]}, "string"),
    ],
)
def test_types_from_json_schema(schema: dict[str, Any], expected: str) -> None:
    found = type_from_schema(schema)
    assert found is not None and found.name == expected


def test_untyped_property_accepts_anything() -> None:
    assert type_from_schema({"description": "anything"}) is None
    catalog = build_catalog([function_tool("f", {"x": {}}, ["x"])], None)
    assert check_call("1", "f", '{"x": [1, {"a": 2}]}', catalog)[1] == []
    assert check_call("1", "f", "{}", catalog)[1][0].problem == "this required parameter is missing"


def test_sdk_command_schemas_round_trip() -> None:
    class Lights(IJarvisCommand):
        command_name = "set_lights"  # type: ignore[assignment]
        description = "Set the lights."  # type: ignore[assignment]

        @property
        def parameters(self) -> list[JarvisParameter]:
            return [
                JarvisParameter("level", "int", required=True),
                JarvisParameter("color", "string", enum_values=["red", "blue"]),
                JarvisParameter("at", "datetime[]"),
                JarvisParameter("fade", "timedelta"),
            ]

        def run(self, request_info: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    command = Lights()
    for catalog in (
        build_catalog([command.to_openai_tool_schema()], None),
        build_catalog([command.to_openai_tool_schema()], [command.get_command_schema()]),
        build_catalog([], [command.get_command_schema()]),
    ):
        params = catalog.tools["set_lights"].params
        assert params["level"].type.name == "int" and params["level"].required
        assert params["color"].enum == ("red", "blue")
        assert params["at"].type.name == "array<datetime>"
        assert params["fade"].type.name == "timedelta"
        ok = {"level": 3, "color": "red", "at": ["2026-01-18T05:00:00Z"], "fade": "PT5S"}
        assert check_call("c", "set_lights", json.dumps(ok), catalog) == (ok, [])
        bad = {"level": "3", "color": "green", "at": ["tomorrow"], "fade": "5 seconds"}
        _, problems = check_call("c", "set_lights", json.dumps(bad), catalog)
        assert {p.param for p in problems} == {"level", "color", "at", "fade"}
        assert all(p.line().startswith("- set_lights, parameter '") for p in problems)


def test_check_call_rules() -> None:
    catalog = build_catalog([], [CALENDAR_COMMAND])

    def problems(args: Any) -> list[str]:
        raw = args if isinstance(args, str) else json.dumps(args)
        return [p.problem for p in check_call("c", "create_event", raw, catalog)[1]]

    good = {"title": "Gym", "start": "2026-01-18T07:00:00+01:00"}
    assert problems(good) == []
    assert problems({**good, "reminder": "null"}) == []  # placeholder for an optional param
    assert problems({**good, "reminder": "PT10M"}) == []
    assert problems({**good, "unknown_extra": 1}) == []  # the node ignores undeclared args
    assert problems({"title": "Gym"}) == ["this required parameter is missing"]
    assert problems({"title": "", "start": good["start"]}) == ["this required parameter is empty"]
    assert "timezone" in problems({"title": "Gym", "start": "2026-01-18T07:00:00"})[0]
    assert problems("[1, 2]") == ["the arguments must be a JSON object"]
    assert problems("{oops")[0].startswith("the arguments are not valid JSON")
    assert problems("") == ["this required parameter is missing"] * 2


def test_enum_values_compare_as_strings() -> None:
    tool = function_tool("set", {"n": {"type": "integer", "enum": [1, 2]},
                                 "b": {"type": "boolean", "enum": [True]}})
    catalog = build_catalog([tool], None)
    assert check_call("c", "set", '{"n": 2, "b": true}', catalog)[1] == []
    assert check_call("c", "set", '{"n": 3}', catalog)[1][0].valid_values == ("1", "2")


def test_prompt_has_a_stable_part_and_a_dated_tail() -> None:
    catalog = build_catalog([WEATHER_TOOL], [CALENDAR_COMMAND])
    stable = system_prompt(catalog)
    assert "## create_event" in stable and "## open_weather_command" in stable
    assert "- start (datetime; required): When the event starts" in stable
    assert "Now:" not in stable and "Resolved dates" not in stable  # nothing time-bound
    now = datetime(2026, 1, 16, 22, 30, tzinfo=UTC)  # Friday 17:30 in New York
    tail = context_message({"timezone": "America/New_York", "room": "kitchen"}, now)
    assert tail.startswith("Now: Friday 2026-01-16 17:30 (2026-01-16T17:30:00-05:00)")
    assert "kitchen" in tail
    assert "tomorrow: 2026-01-17T00:00:00-05:00" in tail
    tokyo = context_message({"timezone": "Asia/Tokyo"}, now)
    assert tokyo.startswith("Now: Saturday 2026-01-17 07:30")


def test_engine_prompt_layout_with_a_fixed_clock(tmp_path: Path) -> None:
    backend = ScriptedBackend([text("Hi.")])
    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    clock = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    engine = Engine(store, backend, clock=lambda: clock)
    cid = conversation_id()
    engine.start(ConversationStartRequest(conversation_id=cid,
                                          node_context=NodeContext(timezone="Europe/Berlin"),
                                          client_tools=[WEATHER_TOOL]))
    reply = engine.command(VoiceCommandRequest(conversation_id=cid, voice_command="hello"))
    assert reply.stop_reason == "complete"
    messages = backend.requests[0].messages
    assert [m["role"] for m in messages] == ["system", "user", "system"]
    assert messages[-1]["content"].startswith("Now: Sunday 2026-03-01 13:00")
    store.close()


def test_parallel_tool_calls_and_mixed_server_calls(tmp_path: Path) -> None:
    backend = ScriptedBackend([
        tool_calls(("open_weather_command", {"city": "Oslo"}),
                   ("open_weather_command", {"city": "Rome"})),
        text("Oslo is cold, Rome is warm."),
        # A server call next to a client call: only the server call runs this round.
        tool_calls(("get_current_datetime", {}), ("open_weather_command", {"city": "Bern"})),
        tool_calls(("open_weather_command", {"city": "Bern"})),
    ])
    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    engine = Engine(store, backend)
    cid = conversation_id()
    engine.start(ConversationStartRequest(conversation_id=cid, client_tools=[WEATHER_TOOL]))
    reply = engine.command(VoiceCommandRequest(conversation_id=cid,
                                               voice_command="weather in oslo and rome"))
    assert reply.tool_calls is not None and len(reply.tool_calls) == 2
    a, b = (c.id for c in reply.tool_calls)
    assert a != b
    done = engine.continue_(ContinueRequest(conversation_id=cid, tool_results=[
        ToolResult(tool_call_id=b, output=ToolOutput(message="Rome 25C")),
        ToolResult(tool_call_id=a, output=ToolOutput(message="Oslo -2C")),
    ]))
    assert done.assistant_message == "Oslo is cold, Rome is warm."  # two results: LLM words
    tool_ids = [m["tool_call_id"] for m in backend.requests[1].messages if m["role"] == "tool"]
    assert tool_ids == [a, b]  # in call order, whatever order the node sent them

    reply = engine.command(VoiceCommandRequest(conversation_id=cid, voice_command="bern?"))
    assert [c.function.name for c in reply.tool_calls or []] == ["open_weather_command"]
    assert len(backend.requests) == 4
    store.close()
