"""The node with the built-in commands discovered from `jarvis.commands` (scripted LLM)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jarvis.center.llm.scripted import ScriptedBackend, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.cli.main import app
from jarvis.node import Node, NodeSettings, NodeStore, open_node


@pytest.fixture
def node_with_center(tmp_path: Path, data_dir: Path) -> Iterator[tuple[Node, ScriptedBackend]]:
    backend = ScriptedBackend([])
    settings = CenterSettings(data_dir=tmp_path / "center", log_level="warning")
    with CenterServer(settings, backend) as server:
        node = open_node(NodeSettings(data_dir=data_dir, timezone="America/New_York",
                                      center_url=server.url,
                                      center_key=server.add_node("node")))
        yield node, backend
        node.close()


def test_builtin_conversion_through_the_center(node_with_center) -> None:
    node, backend = node_with_center
    backend.add(tool_call("convert_measurement", value=10, from_unit="kilometers",
                          to_unit="miles"))

    result = node.service.process_voice_command("how far is ten kilometres in old miles")

    assert result.stop_reason == "complete" and not result.pre_routed
    assert "6.2" in result.message
    offered = {t["function"]["name"] for t in backend.requests[0].tools}
    assert {"convert_measurement", "get_weather", "set_timer", "control_device"} <= offered


def test_builtin_device_control_without_token_tells_how_to_set_it(node_with_center) -> None:
    node, backend = node_with_center
    backend.add(tool_call("control_device", action="turn_on", entity="kitchen light"))

    result = node.service.process_voice_command("turn on the kitchen light")

    assert result.stop_reason == "complete"
    assert "HOME_ASSISTANT" in result.message
    assert "jarvis secrets set HOME_ASSISTANT_" in result.message


def test_install_all_declares_the_builtin_secrets(data_dir: Path) -> None:
    NodeStore(data_dir).secrets.set_secret("HOME_ASSISTANT_TOKEN", "already-there")
    result = CliRunner().invoke(app, ["commands", "install", "--all"])
    assert result.exit_code == 0, result.output
    rows = {r.key: r for r in NodeStore(data_dir).secrets.list_secrets()}
    assert {"HOME_ASSISTANT_URL", "HOME_ASSISTANT_TOKEN"} <= set(rows)
    assert rows["HOME_ASSISTANT_TOKEN"].is_set and not rows["HOME_ASSISTANT_URL"].is_set
    assert NodeStore(data_dir).secrets.get_secret("HOME_ASSISTANT_TOKEN") == "already-there"
