"""A real MCP server process (tests/mcp_bridge/sample_server.py) whose tools become commands."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import SAMPLE_SERVER, free_port, wait_for_port

from jarvis.node.mcp import McpServerConfig, SecretRef, add_mcp_commands
from jarvis.node.registry import CommandRegistry
from jarvis.node.store import NodeStore
from jarvis.sdk import (
    CommandContext,
    CommandResponse,
    EnvironmentSecretStore,
    IJarvisCommand,
    RequestInformation,
    SecretStore,
)

INFO = RequestInformation(timezone="Europe/Paris")


class Crash(IJarvisCommand):
    """A command of the node whose name one of the sample server's tools also has."""

    command_name = "crash"
    description = "Already here."

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        return CommandResponse.success_response(message="the node's own crash")


def _registry(configs: list[McpServerConfig], secrets: SecretStore | None = None,
              commands: list[IJarvisCommand] | None = None) -> CommandRegistry:
    secrets = secrets or EnvironmentSecretStore()
    registry = CommandRegistry.from_commands(commands or [])
    add_mcp_commands(registry, configs, secrets)
    registry.bind(CommandContext(secrets=secrets))
    return registry


@pytest.fixture
def sample(sample_command: list[str]) -> Iterator[CommandRegistry]:
    registry = _registry([McpServerConfig("sample", command=sample_command)])
    yield registry
    registry.close()


def test_tools_become_commands_with_their_descriptions_and_schemas(
    sample: CommandRegistry,
) -> None:
    assert sorted(sample.commands) == ["babble", "convert_temperature", "crash", "plan_meeting",
                                       "stall", "tag_items", "token_length"]
    assert sample.problems == []
    command = sample.get("convert_temperature")
    assert command is not None
    assert command.description == (
        "Convert a temperature to the other unit. (from the MCP server 'sample')")
    schema = command.to_openai_tool_schema()["function"]["parameters"]
    assert schema["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert schema["properties"]["value"]["type"] == "number"
    assert schema["required"] == ["value", "unit"]
    meeting = sample.get("plan_meeting")
    assert meeting is not None
    assert [p.param_type for p in meeting.parameters] == ["date", "array<string>", "int"]
    assert sample.sources["crash"].startswith("MCP server sample (")


def test_a_call_goes_through_the_pipeline_to_the_server(sample: CommandRegistry) -> None:
    converted = sample.commands["convert_temperature"].execute(INFO, value=20, unit="celsius")
    assert converted.success and converted.message == "20 °C is 68 °F"
    assert converted.context_data["mcp_server"] == "sample"
    # a date is coerced by the pipeline and goes back on the wire as text
    planned = sample.commands["plan_meeting"].execute(INFO, day="2026-11-27",
                                                      attendees=["Ann", "Bob"])
    assert planned.message == "Meeting on Friday 27 November 2026 for 30 minutes with Ann, Bob"
    # a JSON parameter is parsed and reaches the server as a value
    tagged = sample.commands["tag_items"].execute(INFO, items='[{"apples": 3}]')
    assert tagged.message == "tagged [{'apples': 3}]"


def test_values_are_refused_before_the_server_sees_them(sample: CommandRegistry) -> None:
    kelvin = sample.commands["convert_temperature"].execute(INFO, value=20, unit="kelvin")
    assert kelvin.is_validation_error
    assert kelvin.context_data["valid_values"] == {"unit": ["celsius", "fahrenheit"]}
    bad_date = sample.commands["plan_meeting"].execute(INFO, day="next friday", attendees=["A"])
    assert bad_date.is_validation_error and "'day'" in (bad_date.message or "")
    # only the tool's own JSON schema can say what is wrong here
    wrong = sample.commands["tag_items"].execute(INFO, items='[{"apples": "three"}]')
    assert wrong.is_validation_error
    assert wrong.context_data["errors"][0]["param_name"] == "items"
    broken = sample.commands["tag_items"].execute(INFO, items='[{"apples": ')
    assert broken.message == "'items' is not valid JSON"


def test_environment_comes_from_the_node_secrets(
    data_dir: Path, sample_command: list[str], caplog: pytest.LogCaptureFixture,
) -> None:
    store = NodeStore(data_dir)
    store.migrate()
    token = "tok-5d41402abc4b2a76b9719d91"
    store.secrets.set_secret("SAMPLE_TOKEN", token)
    config = McpServerConfig("sample", command=sample_command,
                             env={"SAMPLE_TOKEN": SecretRef("SAMPLE_TOKEN")})
    caplog.set_level(logging.DEBUG)
    registry = _registry([config], store.secrets)
    try:
        command = registry.commands["token_length"]
        assert [s.key for s in command.required_secrets] == ["SAMPLE_TOKEN"]
        answer = command.execute(INFO, variable="SAMPLE_TOKEN")
        assert answer.message == f"SAMPLE_TOKEN has {len(token)} characters"
    finally:
        registry.close()
        store.close()
    assert token not in caplog.text and token not in repr(config)


def test_a_missing_secret_names_the_way_to_set_it(
    data_dir: Path, sample_command: list[str]
) -> None:
    store = NodeStore(data_dir)
    store.migrate()
    config = McpServerConfig("sample", command=sample_command,
                             env={"SAMPLE_TOKEN": SecretRef("SAMPLE_TOKEN")})
    registry = _registry([config], store.secrets)
    store.close()
    assert len(registry) == 0
    [problem] = registry.problems
    assert problem.message == ("not started: it needs SAMPLE_TOKEN; "
                               "set with: jarvis secrets set SAMPLE_TOKEN")


def test_names_are_namespaced_when_they_collide(sample_command: list[str]) -> None:
    configs = [McpServerConfig("alpha", command=sample_command),
               McpServerConfig("beta", command=sample_command)]
    registry = _registry(configs, commands=[Crash()])
    try:
        names = set(registry.commands)
        assert {"alpha_convert_temperature", "beta_convert_temperature",
                "alpha_crash", "beta_crash", "crash"} <= names
        assert "convert_temperature" not in names
        assert registry.sources["crash"] == "given"
        answer = registry.commands["beta_convert_temperature"].execute(
            INFO, value=212, unit="fahrenheit")
        assert answer.message == "212 °F is 100 °C"
    finally:
        registry.close()


def test_a_streamable_http_server(sample_command: list[str]) -> None:
    port = free_port()
    process = subprocess.Popen([sys.executable, str(SAMPLE_SERVER), "--http", str(port)],
                               stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        config = McpServerConfig("remote", url=f"http://127.0.0.1:{port}/mcp",
                                 headers={"X-Client": "jarvis"})
        registry = _registry([config])
        try:
            answer = registry.commands["convert_temperature"].execute(INFO, value=0,
                                                                      unit="celsius")
            assert answer.message == "0 °C is 32 °F"
        finally:
            registry.close()
    finally:
        process.terminate()
        process.wait(timeout=10)

