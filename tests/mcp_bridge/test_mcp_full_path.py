"""Utterance -> center -> node -> MCP tool -> answer, over real HTTP and real processes.

The center is the real FastAPI app served by uvicorn on loopback; its LLM is the
scripted backend (these tests are about the protocol, so the script says which tool
"the model" calls). The node reads its MCP servers from `mcp_servers.yaml` like any node.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.cli.main import app
from jarvis.node import JarvisCommandCenterClient, NodeSettings
from jarvis.node.runtime import Node, open_node


def _write_servers(data_dir: Path, servers: dict[str, dict[str, object]]) -> None:
    (data_dir / "mcp_servers.yaml").write_text(json.dumps({"servers": servers}))


@pytest.fixture
def center(tmp_path: Path) -> Iterator[tuple[CenterServer, ScriptedBackend]]:
    backend = ScriptedBackend([])
    settings = CenterSettings(data_dir=tmp_path / "center", log_level="warning")
    with CenterServer(settings, backend) as server:
        yield server, backend


@pytest.fixture
def node(data_dir: Path, center: tuple[CenterServer, ScriptedBackend],
         sample_command: list[str]) -> Iterator[Node]:
    _write_servers(data_dir, {"sample": {"command": sample_command, "call_timeout": 2}})
    settings = NodeSettings(data_dir=data_dir, timezone="Europe/Paris", node_id="hall")
    with open_node(settings, client=JarvisCommandCenterClient(
            center[0].url, key=center[0].add_node("hall", replace=True))) as opened:
        yield opened


def _script(backend: ScriptedBackend, *replies: object) -> None:
    backend.__init__(list(replies))  # type: ignore[misc]


def test_an_utterance_reaches_the_mcp_tool_and_comes_back_as_the_answer(
    node: Node, center: tuple[CenterServer, ScriptedBackend],
) -> None:
    backend = center[1]
    _script(backend, tool_call("convert_temperature", value=100, unit="celsius"),
            text("100 degrees Celsius is 212 degrees Fahrenheit."))
    result = node.service.process_voice_command("what is 100 celsius in fahrenheit")
    assert result.stop_reason == "complete"
    assert result.message == "100 degrees Celsius is 212 degrees Fahrenheit."
    [record] = result.tool_calls
    assert record.name == "convert_temperature" and record.success
    assert record.message == "100 °C is 212 °F"
    # the center saw the tool like any other command, and the model read its answer
    offered = {t["function"]["name"]: t for t in backend.requests[0].tools}
    unit = offered["convert_temperature"]["function"]["parameters"]["properties"]["unit"]
    assert unit["enum"] == ["celsius", "fahrenheit"]
    assert "100 °C is 212 °F" in json.dumps(backend.requests[1].messages, ensure_ascii=False)


def test_a_failing_server_is_a_sentence_for_the_model_and_the_node_goes_on(
    node: Node, center: tuple[CenterServer, ScriptedBackend],
) -> None:
    backend = center[1]
    _script(backend, tool_call("crash"), tool_call("get_current_time"))
    result = node.service.process_voice_command("crash the sample server")
    # the user hears the sentence itself (a failed command's message is spoken as is)
    assert result.stop_reason == "complete"
    assert result.message == "The sample server stopped while answering; it is being restarted."
    assert result.tool_calls[0].success is False
    # the node answers the next utterance with another command
    after = node.service.process_voice_command("what time is it")
    assert after.stop_reason == "complete" and after.tool_calls[0].success
    assert after.tool_calls[0].name == "get_current_time"


@pytest.mark.skipif(importlib.util.find_spec("mcp_server_time") is None,
                    reason="mcp-server-time is not installed (pip install mcp-server-time)")
def test_the_published_time_server(
    data_dir: Path, center: tuple[CenterServer, ScriptedBackend],
) -> None:
    command = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "Europe/Paris"]
    _write_servers(data_dir, {"time": {"command": command}})
    backend = center[1]
    settings = NodeSettings(data_dir=data_dir, timezone="Europe/Paris", node_id="hall")
    with open_node(settings, client=JarvisCommandCenterClient(
            center[0].url, key=center[0].add_node("hall", replace=True))) as opened:
        # the built-in get_current_time keeps its name; the server's is namespaced
        assert opened.registry.sources["get_current_time"] == "jarvis.commands.current_time"
        assert "time_get_current_time" in opened.registry and "convert_time" in opened.registry
        _script(backend, tool_call("convert_time", source_timezone="Europe/Paris",
                                   time="16:30", target_timezone="Asia/Tokyo"),
                text("It will be half past midnight in Tokyo."))
        result = opened.service.process_voice_command(
                "convert 16:30 from Europe/Paris to Asia/Tokyo time")
    assert result.message == "It will be half past midnight in Tokyo."
    [record] = result.tool_calls
    assert record.success, record.message
    assert record.output["context"]["result"]["target"]["timezone"] == "Asia/Tokyo"
    assert record.output["context"]["result"]["target"]["datetime"][11:16] == "00:30"


def test_jarvis_commands_list_shows_the_mcp_tools(data_dir: Path,
                                                   sample_command: list[str]) -> None:
    _write_servers(data_dir, {"sample": {"command": sample_command},
                              "broken": {"command": ["/nonexistent/server"]}})
    result = CliRunner().invoke(app, ["commands", "list"])
    assert result.exit_code == 0, result.output
    assert "convert_temperature  MCP server sample (" in result.output
    assert "MCP server broken (/nonexistent/server): not started" in result.output
    assert "get_current_time  jarvis.commands.current_time" in result.output
