"""What the LLM and the center see of a command: the tool schema and the command schema."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jarvis.sdk import (
    CommandAntipattern,
    CommandExample,
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    RequestInformation,
)


class GetWeather(IJarvisCommand):
    """The parameters of the spec's schema example."""

    @property
    def command_name(self) -> str:
        return "get_weather"

    @property
    def description(self) -> str:
        return "Weather conditions or forecast"

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("city", "string", required=False, description="City name"),
            JarvisParameter("unit", "string", required=False, enum_values=["metric", "imperial"]),
            JarvisParameter("dates", "array<datetime>", required=True, description="Target dates"),
        ]

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        return CommandResponse.success_response({"message": "Sunny"})


# Typed by hand from the spec's "How Parameters Become Tool Schema" section.
SPEC_WEATHER_SCHEMA = """
{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather conditions or forecast",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {
                    "type": "string",
                    "description": "City name"
                },
                "unit": {
                    "type": "string",
                    "enum": ["metric", "imperial"]
                },
                "dates": {
                    "type": "array",
                    "description": "Target dates",
                    "items": {"type": "string", "format": "date-time"}
                }
            },
            "required": ["dates"]
        }
    }
}
"""


def test_the_spec_weather_example_comes_out_byte_for_byte() -> None:
    ours = json.dumps(GetWeather().to_openai_tool_schema(), sort_keys=True)
    spec = json.dumps(json.loads(SPEC_WEATHER_SCHEMA), sort_keys=True)
    assert ours == spec


class Everything(IJarvisCommand):
    """A command using every schema feature."""

    @property
    def command_name(self) -> str:
        return "play_music"

    @property
    def description(self) -> str:
        return "Play music"

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("query", "string", required=True, description="What to play",
                            example="jazz for cooking"),
            JarvisParameter("volume_level", "int", description="Volume 0-100", refinable=True,
                            default="50"),
            JarvisParameter("queue_option", "string", enum_values=["play", "next", "add"],
                            refinable=True),
            JarvisParameter("start", "time"),
            JarvisParameter("day", "date"),
            JarvisParameter("length", "timedelta"),
            JarvisParameter("moods", "string[]"),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("play some jazz", {"query": "jazz"}, is_primary=True),
            CommandExample("queue up daft punk next", {"query": "daft punk",
                                                       "queue_option": "next"}),
        ]

    @property
    def rules(self) -> list[str]:
        return ["Use the artist name as the query when one is said"]

    @property
    def critical_rules(self) -> list[str]:
        return ["'after this' means queue_option=next"]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [CommandAntipattern("set_volume", "Volume changes alone go to set_volume")]

    @property
    def allow_direct_answer(self) -> bool:
        return True

    @property
    def keywords(self) -> list[str]:
        return ["music", "song"]

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        return CommandResponse.success_response()


def test_tool_schema_shape_formats_enum_refinable_and_omitted_keys() -> None:
    schema = Everything().to_openai_tool_schema()
    assert schema["type"] == "function"
    function = schema["function"]
    assert set(function) == {"name", "description", "parameters"}
    props = function["parameters"]["properties"]
    assert list(props) == ["query", "volume_level", "queue_option", "start", "day", "length",
                           "moods"]
    assert props["query"] == {"type": "string",
                              "description": "What to play. Example: jazz for cooking"}
    assert props["volume_level"] == {"type": "integer", "description": "Volume 0-100",
                                     "_refinable": True}
    assert props["queue_option"] == {"type": "string", "enum": ["play", "next", "add"],
                                     "_refinable": True}
    assert props["start"] == {"type": "string", "format": "time"}
    assert props["day"] == {"type": "string", "format": "date"}
    assert props["length"] == {"type": "string", "format": "duration"}
    assert props["moods"] == {"type": "array", "items": {"type": "string"}}
    assert function["parameters"]["required"] == ["query"]
    # No key carries an empty value.
    for prop in props.values():
        assert all(v not in (None, [], "") for v in prop.values())


def test_command_schema_has_every_part_and_is_json() -> None:
    schema = Everything().get_command_schema()
    assert json.loads(json.dumps(schema)) == schema
    assert schema["command_name"] == "play_music"
    assert schema["description"] == "Play music"
    assert schema["parameters"][1] == {
        "name": "volume_level", "type": "int", "required": False, "description": "Volume 0-100",
        "enum_values": None, "refinable": True, "default": "50", "example": None,
    }
    assert schema["parameters"][2]["enum_values"] == ["play", "next", "add"]
    assert schema["parameters"][0]["example"] == "jazz for cooking"
    assert schema["examples"] == [
        {"voice_command": "play some jazz", "expected_parameters": {"query": "jazz"},
         "is_primary": True},
        {"voice_command": "queue up daft punk next",
         "expected_parameters": {"query": "daft punk", "queue_option": "next"},
         "is_primary": False},
    ]
    assert schema["rules"] == ["Use the artist name as the query when one is said"]
    assert schema["critical_rules"] == ["'after this' means queue_option=next"]
    assert schema["antipatterns"] == [
        {"command_name": "set_volume", "description": "Volume changes alone go to set_volume"}
    ]
    assert schema["allow_direct_answer"] is True
    assert schema["keywords"] == ["music", "song"]


def test_defaults_of_a_minimal_command() -> None:
    schema = GetWeather().get_command_schema()
    assert schema["examples"] == [] and schema["rules"] == [] and schema["critical_rules"] == []
    assert schema["antipatterns"] == [] and schema["keywords"] == []
    assert schema["allow_direct_answer"] is False


def test_more_than_one_primary_example_is_refused() -> None:
    class TwoPrimaries(GetWeather):
        @property
        def examples(self) -> list[CommandExample]:
            return [CommandExample("weather", {}, is_primary=True),
                    CommandExample("forecast", {}, is_primary=True)]

    with pytest.raises(ValueError, match="at most one example may be primary"):
        TwoPrimaries().get_command_schema()


def test_the_command_schema_is_what_the_protocol_model_reads() -> None:
    from jarvis.protocol.models import AvailableCommand

    parsed = AvailableCommand.model_validate(Everything().get_command_schema())
    assert parsed.command_name == "play_music"
    assert [p.name for p in parsed.parameters][:2] == ["query", "volume_level"]
