"""The official MCP client talking to `jarvis mcp serve` (a real subprocess, stdio and HTTP)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp_helpers import SRC, free_port, wait_for_port

from jarvis.node.registry import discover_commands
from jarvis.node.store import NodeStore
from jarvis.sdk import CommandContext

OVERRIDE = "Bonjour-from-the-override"
ALARM_CODE = "alarm-code-8d7f1e2b"

TOOLS_YAML = f"""
tools:
  - name: greet
    description: Greet someone by name
    exec: ["echo", "{{greeting}}", "{{name}}"]
    params:
      - name: name
        type: str
        required: true
        description: Who to greet
      - name: greeting
        override: "{OVERRIDE}"
"""

ALARM = '''
from jarvis.sdk import CommandResponse, IJarvisCommand, JarvisSecret

class HouseAlarm(IJarvisCommand):
    command_name = "house_alarm"
    description = "Arms the house alarm."

    @property
    def required_secrets(self):
        return [JarvisSecret("ALARM_CODE", "The alarm's code")]

    def run(self, request_info, **kwargs):
        code = self.get_secret("ALARM_CODE")
        return CommandResponse.success_response(message=f"Armed with a {len(code)}-digit code.")
'''

PAINT = '''
from jarvis.sdk import CommandResponse, IJarvisCommand, JarvisParameter, ValidationResult

class PaintRoom(IJarvisCommand):
    command_name = "paint_room"
    description = "Paints the room."
    parameters = [JarvisParameter("colour", "string", required=True,
                                  enum_values=["red", "green"])]

    def validate_call(self, **kwargs):
        if kwargs.get("colour") == "rouge":  # a near miss the command corrects itself
            return [ValidationResult(success=True, param_name="colour", suggested_value="red")]
        if kwargs.get("colour") == "purple":
            return [ValidationResult(success=False, param_name="colour",
                                     message="Purple is sold out.", valid_values=["red", "green"])]
        return super().validate_call(**kwargs)

    def run(self, request_info, **kwargs):
        return CommandResponse.success_response(message=f"Painted {kwargs['colour']}.")
'''


@pytest.fixture
def node_dir(data_dir: Path) -> Path:
    """A node with a YAML tool holding an override and a command needing a secret."""
    (data_dir / "tools").mkdir()
    (data_dir / "tools" / "greet.yaml").write_text(TOOLS_YAML)
    (data_dir / "commands").mkdir()
    (data_dir / "commands" / "alarm.py").write_text(ALARM)
    (data_dir / "commands" / "paint.py").write_text(PAINT)
    store = NodeStore(data_dir)
    store.migrate()
    store.secrets.set_secret("ALARM_CODE", ALARM_CODE)
    store.close()
    return data_dir


def _environment(data_dir: Path) -> dict[str, str]:
    """What `jarvis mcp serve` needs (the SDK passes only a few variables on by default)."""
    names = ("JARVIS_KEY_DIR", "JARVIS_SECRET_KEY_STORE", "JARVIS_TIMEZONE")
    env = {name: os.environ[name] for name in names if name in os.environ}
    # weather fails at once on a closed port instead of reaching the internet
    env.update(PYTHONPATH=str(SRC), JARVIS_DATA_DIR=str(data_dir),
               JARVIS_OPEN_METEO_URL="http://127.0.0.1:9",
               JARVIS_OPEN_METEO_GEOCODING_URL="http://127.0.0.1:9")
    return env


def _stdio(data_dir: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "jarvis.cli.main", "mcp", "serve"],
                                 env=_environment(data_dir))


def _text(result: types.CallToolResult) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def _connect(target: Any, check: Any) -> Any:
    async with Client(target, read_timeout_seconds=60) as client:
        listed = await client.list_tools()
        return await check(client, {tool.name: tool for tool in listed.tools})


def test_list_call_and_a_validation_error_over_stdio(node_dir: Path) -> None:
    async def check(client: Client, tools: dict[str, types.Tool]) -> None:
        assert {"roll_dice", "calculate", "greet", "house_alarm"} <= set(tools)
        product = await client.call_tool("calculate", {"num1": 6, "num2": 7,
                                                       "operation": "multiply"})
        assert not product.is_error
        assert _text(product) == "6 times 7 is 42."
        assert product.structured_content is not None
        refused = await client.call_tool("calculate", {"num1": 6, "num2": 7,
                                                       "operation": "modulo"})
        assert refused.is_error
        assert _text(refused) == ("Invalid value 'modulo' for 'operation'. "
                                  "Must be one of: add, subtract, multiply, divide, percent")
        wrong_type = await client.call_tool("roll_dice", {"sides": "many"})
        assert wrong_type.is_error and "'sides'" in _text(wrong_type)
        # validate_call's suggested value is applied, as on the node
        corrected = await client.call_tool("paint_room", {"colour": "rouge"})
        assert _text(corrected) == "Painted red."
        refused_colour = await client.call_tool("paint_room", {"colour": "blue"})
        assert refused_colour.is_error and _text(refused_colour) == (
            "Invalid value 'blue' for 'colour'. Must be one of: red, green")
        # a message that does not list the valid values gets them appended
        sold_out = await client.call_tool("paint_room", {"colour": "purple"})
        assert sold_out.is_error and _text(sold_out) == (
            "Purple is sold out. Valid values for 'colour': red, green.")

    asyncio.run(_connect(_stdio(node_dir), check))


def test_overrides_and_secrets_never_reach_the_client(node_dir: Path) -> None:
    async def check(client: Client, tools: dict[str, types.Tool]) -> list[str]:
        greet = tools["greet"].input_schema
        assert set(greet["properties"]) == {"name"} and greet["required"] == ["name"]
        said = [
            await client.call_tool("greet", {"name": "Ann"}),
            await client.call_tool("greet", {"name": "Ann", "greeting": "Hi"}),
            await client.call_tool("house_alarm", {}),
        ]
        assert _text(said[0]) == "[hidden] Ann"
        assert said[1].is_error and "Unknown parameter 'greeting'" in _text(said[1])
        assert _text(said[2]) == f"Armed with a {len(ALARM_CODE)}-digit code."
        return [t.model_dump_json() for t in tools.values()] + [r.model_dump_json() for r in said]

    shown = asyncio.run(_connect(_stdio(node_dir), check))
    assert not any(OVERRIDE in text or ALARM_CODE in text for text in shown)


def test_every_built_in_command_round_trips(data_dir: Path) -> None:
    builtins = discover_commands(CommandContext(), entry_points_enabled=False, yaml_tools=False)
    examples = {c.command_name: _example(c.examples) for c in builtins}

    async def check(client: Client, tools: dict[str, types.Tool]) -> dict[str, Any]:
        assert set(examples) <= set(tools)
        results = {}
        for name, arguments in examples.items():
            jsonschema.Draft202012Validator.check_schema(tools[name].input_schema)
            jsonschema.validate(arguments, tools[name].input_schema)
            results[name] = await client.call_tool(name, arguments)
        return results

    results = asyncio.run(_connect(_stdio(data_dir), check))
    for name, result in results.items():
        text = _text(result)
        assert text.strip() and "Traceback" not in text, name
    # these need a device, a player or settings this node lacks; each says so in a sentence
    needs_setup = {"control_device", "music", "get_weather"}
    assert [n for n, r in results.items() if r.is_error and n not in needs_setup] == []
    assert "jarvis secrets set HOME_ASSISTANT" in _text(results["control_device"])


def _example(examples: list[Any]) -> dict[str, Any]:
    primary = next((e for e in examples if e.is_primary), examples[0] if examples else None)
    return dict(primary.expected_parameters) if primary is not None else {}


@pytest.fixture
def http_server(node_dir: Path) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, **_environment(node_dir)}
    process = subprocess.Popen(
        [sys.executable, "-m", "jarvis.cli.main", "mcp", "serve", "--http", "--port", str(port)],
        env=env, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, timeout=60)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_streamable_http(http_server: str) -> None:
    async def check(client: Client, tools: dict[str, types.Tool]) -> None:
        assert "greet" in tools
        sum_ = await client.call_tool("calculate", {"num1": 2, "num2": 3, "operation": "add"})
        assert _text(sum_) == "2 plus 3 is 5."

    asyncio.run(_connect(http_server, check))
