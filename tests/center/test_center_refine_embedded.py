"""Refinable follow-ups with the real embedded model behind the real center, over HTTP.

A node (`JarvisCommandCenterClient`) registers every built-in command as it does in a
room, plus one foreign command: a plain OpenAI tool with a `"_refinable": true`
property. Each conversation runs a command, reports it done, then says only what
changes. Skips when the model has not been prepared (fails with `JARVIS_REQUIRE_MODEL=1`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

pytest.importorskip("llama_cpp", reason="the embedded extra is not installed")

from test_center_embedded import CONTEXT, TIMEZONE, _model_path

from jarvis.center.llm.embedded import EmbeddedBackend
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.node.client import JarvisCommandCenterClient
from jarvis.node.registry import discover_commands
from jarvis.protocol.models import ToolCall, ToolOutput, ToolResult
from jarvis.sdk.context import CommandContext

pytestmark = pytest.mark.model

# A command nobody on the project wrote: only its schema says what a follow-up may change.
THERMOSTAT = {"type": "function", "function": {
    "name": "set_thermostat",
    "description": "Set the thermostat of a room to a temperature in degrees Celsius.",
    "parameters": {"type": "object", "properties": {
        "room": {"type": "string", "description": "The room, e.g. living room"},
        "temperature": {"type": "integer", "minimum": 10, "maximum": 30,
                        "description": "Target temperature in degrees Celsius",
                        "_refinable": True}},
        "required": ["room", "temperature"]}}}


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        tuple[JarvisCommandCenterClient, list[dict[str, Any]], list[Any]]]:
    registry = discover_commands(CommandContext(timezone=TIMEZONE), entry_points_enabled=False,
                                 yaml_tools=False, user_dir=None)
    tools = [*(c.to_openai_tool_schema() for c in registry), THERMOSTAT]
    commands = [c.get_command_schema() for c in registry]
    backend = EmbeddedBackend(_model_path())
    backend.load()
    # A generous timeout: the first request reads the whole prompt on a busy CPU.
    settings = CenterSettings(data_dir=tmp_path_factory.mktemp("center-refine"),
                              llm_timeout=300)
    with (CenterServer(settings=settings, backend=backend) as server,
          JarvisCommandCenterClient(server.url, timeout=600,
                                    key=server.add_node("node")) as client):
        yield client, tools, commands
    backend.close()


class _Conversation:
    """One conversation of the node: every call it is given succeeds."""

    def __init__(self, node: tuple[JarvisCommandCenterClient, list[Any], list[Any]]) -> None:
        self.client, tools, commands = node
        self.id = "refine-" + uuid.uuid4().hex
        self.client.start_conversation(self.id, CONTEXT, tools, commands)
        # Every call run, in order: a refinement names the call it changes (`refines`).
        self.calls: list[ToolCall] = []

    def say(self, text: str) -> tuple[str, dict[str, Any]]:
        """The one call `text` leads to (reported as run), as (tool, arguments)."""
        response = self.client.send_command(text, self.id)
        assert response.stop_reason == "tool_calls", (text, response.stop_reason,
                                                      response.assistant_message)
        [call] = response.tool_calls or []
        self.calls.append(call)
        done = self.client.send_tool_results(self.id, [ToolResult(
            tool_call_id=call.id, output=ToolOutput(success=True, message="Done."))])
        assert done.stop_reason == "complete", done.assistant_message
        return call.function.name, json.loads(call.function.arguments)


def _changed(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What differs between two argument sets (a key gone reads as None)."""
    return {k: after.get(k) for k in {*before, *after} if before.get(k) != after.get(k)}


def test_a_timer_follow_up_changes_only_the_duration(node: Any) -> None:
    talk = _Conversation(node)
    name, first = talk.say("set a timer for 10 minutes")
    assert (name, first["duration"]) == ("set_timer", "PT10M"), first
    name, second = talk.say("actually make it 20 minutes")
    assert name == "set_timer" and _changed(first, second) == {"duration": "PT20M"}, second
    # The node changes the timer the first call started instead of starting a second one.
    assert talk.calls[1].refines == talk.calls[0].id
    # A number said alone is in the unit of the length it changes: 30 minutes.
    name, third = talk.say("actually make it 30")
    assert name == "set_timer" and _changed(second, third) == {"duration": "PT30M"}, third


def test_weather_follow_ups_change_the_unit_then_the_day_and_keep_the_city(node: Any) -> None:
    talk = _Conversation(node)
    name, first = talk.say("what's the weather in london")
    assert name == "get_weather" and first["city"].lower() == "london", first
    name, second = talk.say("and in fahrenheit")
    assert name == "get_weather" and _changed(first, second) == {"unit": "imperial"}, second
    name, third = talk.say("what about tomorrow")
    tomorrow = (datetime.now(ZoneInfo(TIMEZONE)) + timedelta(days=1)).date().isoformat()
    assert name == "get_weather" and set(_changed(second, third)) == {"resolved_datetimes"}
    assert [d[:10] for d in third["resolved_datetimes"]] == [tomorrow], third


def test_a_conversion_follow_up_changes_only_the_target_unit(node: Any) -> None:
    talk = _Conversation(node)
    name, first = talk.say("convert 10 kilometers to miles")
    assert name == "convert_measurement" and first["to_unit"] == "miles", first
    name, second = talk.say("what about in feet")
    assert name == "convert_measurement" and _changed(first, second) == {"to_unit": "feet"}


def test_a_reminder_follow_up_changes_only_the_clock_time(node: Any) -> None:
    talk = _Conversation(node)
    name, first = talk.say("remind me to call mom at 5 pm")
    assert name == "reminder" and first["action"] == "set", first
    # Two clock times in one conversation: the second one is said too, so it is kept.
    name, second = talk.say("actually make it 6 pm")
    assert name == "reminder" and _changed(first, second) == {"time": "18:00"}, second
    assert talk.calls[1].refines == talk.calls[0].id


def test_a_foreign_command_is_refined_from_its_schema_alone(node: Any) -> None:
    talk = _Conversation(node)
    name, first = talk.say("set the living room thermostat to 20 degrees")
    assert (name, first) == ("set_thermostat", {"room": "living room", "temperature": 20})
    name, second = talk.say("actually make it 23")
    assert (name, second) == ("set_thermostat", {"room": "living room", "temperature": 23})
    # A step: a tenth of the schema's 10..30 range.
    name, third = talk.say("make it a bit warmer")
    assert (name, third) == ("set_thermostat", {"room": "living room", "temperature": 25})
    assert [c.refines for c in talk.calls] == [None, talk.calls[0].id, talk.calls[1].id]


def test_a_new_request_after_a_refinable_call_is_not_a_refinement(node: Any) -> None:
    talk = _Conversation(node)
    assert talk.say("what's the weather in london")[0] == "get_weather"
    assert talk.say("tell me a joke") == ("tell_joke", {})
