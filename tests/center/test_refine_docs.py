"""The "Refinable parameters" section of docs/commands.md runs as written: its command,
YAML tool and OpenAI tool declare refinable values, and its table of follow-ups holds
over real HTTP (scripted LLM for the one row the LLM decides)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from center_helpers import conversation_id, function_tool

from jarvis.center.llm.scripted import ScriptedBackend, tool_call
from jarvis.sdk import RequestInformation
from jarvis.sdk.yaml_tools import load_tool_file

DOC = Path(__file__).resolve().parents[2] / "docs" / "commands.md"
SECTION = DOC.read_text(encoding="utf-8").split("### Refinable parameters", 1)[1].split(
    "\n### ", 1)[0]


def _block(language: str) -> str:
    [block] = re.findall(rf"```{language}\n(.*?)```", SECTION, flags=re.S)
    return block


def _lamp() -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(_block("python"), str(DOC), "exec"), namespace)
    return namespace["SetLamp"]()


def test_the_three_declarations_mark_the_value_refinable(tmp_path: Path) -> None:
    lamp = _lamp()
    properties = lamp.to_openai_tool_schema()["function"]["parameters"]["properties"]
    assert properties["brightness"]["_refinable"] is True
    response = lamp.execute(RequestInformation(), lamp="desk", brightness=40)
    assert response.message == "The desk lamp is at 40 percent."
    path = tmp_path / "thermostat.yaml"
    path.write_text(_block("yaml"), encoding="utf-8")
    [tool] = load_tool_file(path)
    assert tool.get_command_schema()["parameters"][1]["refinable"] is True
    thermostat = json.loads(_block("json"))
    assert thermostat["function"]["parameters"]["properties"]["temperature"]["_refinable"]


def _after_first_call(center: Any, text: str, tools: list[dict[str, Any]],
                      commands: list[dict[str, Any]] | None = None) -> str:
    cid = conversation_id()
    center.start(cid, tools, commands)
    [call] = center.command(cid, text)["tool_calls"]
    center.results(cid, (call["id"], {"success": True, "message": "Done."}))
    return cid


def _next_call(reply: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    [call] = reply["tool_calls"]
    return call["function"]["name"], json.loads(call["function"]["arguments"])


def test_the_table_of_follow_ups(make_center: Any) -> None:
    lamp, thermostat = _lamp(), json.loads(_block("json"))
    weather = function_tool("get_weather", {"city": {"type": "string"}},
                            description="The weather forecast")
    tools = [lamp.to_openai_tool_schema(), thermostat, weather]
    commands = [lamp.get_command_schema()]
    first = tool_call("set_lamp", lamp="desk", brightness=40)
    backend = ScriptedBackend([
        first, tool_call("set_lamp", brightness=70),  # "actually make it 70"
        first, first, first, tool_call("get_weather"),
        tool_call("set_thermostat", room="den", temperature=20),
    ])
    center = make_center(backend)
    said = "set the desk lamp to 40"
    cid = _after_first_call(center, said, tools, commands)
    assert _next_call(center.command(cid, "actually make it 70")) == (
        "set_lamp", {"lamp": "desk", "brightness": 70})
    cid = _after_first_call(center, said, tools, commands)
    assert _next_call(center.command(cid, "10 percent brighter")) == (
        "set_lamp", {"lamp": "desk", "brightness": 50})
    cid = _after_first_call(center, said, tools, commands)
    asked = center.command(cid, "brighter")
    assert asked["stop_reason"] == "validation_required"
    assert asked["validation_request"]["parameter_name"] == "brightness"
    cid = _after_first_call(center, said, tools, commands)
    assert _next_call(center.command(cid, "and what's the weather"))[0] == "get_weather"
    cid = _after_first_call(center, "set the den to 20 degrees", tools, commands)
    assert _next_call(center.command(cid, "a bit warmer")) == (
        "set_thermostat", {"room": "den", "temperature": 22})
