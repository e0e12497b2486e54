"""A YAML tool called by the center's (scripted) LLM through a real node over real HTTP.

The center is the real app served by uvicorn on a loopback port and the node is the real
CommandExecutionService with the registry that loads `<data_dir>/tools`. Only the LLM is
scripted (a protocol test): it asks for the tool, and words the answer from its result.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import httpx
import pytest

from jarvis.center.llm.base import LLMReply, LLMRequest
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.node import (
    CommandExecutionService,
    JarvisCommandCenterClient,
    NodeSettings,
    NodeStore,
    command_context,
    discover_commands,
)

SECRET = "e2e-Override-Secret-9f3b"
FOLDER = "/srv/music-folder-e2e"

PROGRAM = """\
#!{python}
import json, os, sys
with open(os.environ["ARGV_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
# A careless program that prints its key: the node masks it before anything leaves.
print(f"4.2G {{sys.argv[-1]}} key={{sys.argv[2]}}")
"""


class RecordingTransport(httpx.HTTPTransport):
    """Keeps every request and response body the node exchanges with the center."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[bytes] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(request.read())
        response = super().handle_request(request)
        self.bodies.append(response.read())
        return response


@pytest.fixture
def node_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "node"
    (data / "tools").mkdir(parents=True)
    monkeypatch.setenv("JARVIS_DATA_DIR", str(data))
    monkeypatch.delenv("JARVIS_TOOLS", raising=False)
    monkeypatch.setenv("JARVIS_E2E_API_KEY", SECRET)
    program = tmp_path / "disk_usage_program"
    program.write_text(PROGRAM.format(python=sys.executable))
    program.chmod(0o755)
    (data / "tools" / "disk.yaml").write_text(
        f"""\
tools:
  - name: disk_usage
    description: Show how much disk space a folder uses
    exec: ["{program}", "--key", "{{api_key}}", "--", "{{path}}"]
    env:
      ARGV_LOG: "{tmp_path / 'argv.log'}"
    params:
      - name: path
        description: Folder to measure
        example: /home/me/Music
      - name: api_key
        override: "${{JARVIS_E2E_API_KEY}}"
"""
    )
    return data


def test_yaml_tool_through_center_and_node(node_data: Path, tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.DEBUG)

    def word_the_answer(request: LLMRequest) -> LLMReply:
        tool_messages = [m for m in request.messages if m.get("role") == "tool"]
        assert "4.2G" in tool_messages[-1]["content"]
        assert "key=[hidden]" in tool_messages[-1]["content"]
        return text(f"That folder uses 4.2 gigabytes ({FOLDER}).")

    backend = ScriptedBackend(
        [
            # The model tries to set the hidden parameter: refused, never used.
            tool_call("disk_usage", path=FOLDER, api_key="attacker-key"),
            tool_call("disk_usage", path=FOLDER),
            word_the_answer,
        ]
    )
    settings = CenterSettings(
        data_dir=tmp_path / "center", log_level="warning", direct_tool_message=False
    )
    transport = RecordingTransport()
    node = NodeSettings(data_dir=node_data, timezone="Europe/Paris", node_id="e2e", room="den")
    store = NodeStore(node_data)
    registry = discover_commands(
        command_context(node, store), builtins=False, entry_points_enabled=False
    )
    assert "disk_usage" in registry, registry.problems

    with CenterServer(settings, backend) as server:
        client = JarvisCommandCenterClient(server.url, transport=transport,
                                           key=server.add_node("node"))
        service = CommandExecutionService(registry, client, node)
        result = service.process_voice_command("how big is my music folder")
        client.close()

    assert result.stop_reason == "complete"
    assert result.message == f"That folder uses 4.2 gigabytes ({FOLDER})."
    assert result.tool_calls[-1].success
    # The program got the override; the attacker's value never reached it.
    runs = [json.loads(line) for line in (tmp_path / "argv.log").read_text().splitlines()]
    assert runs == [["--key", SECRET, "--", FOLDER]]

    # The schema the LLM saw has no trace of the hidden parameter.
    tools = backend.requests[0].tools
    [schema] = [t for t in tools if t["function"]["name"] == "disk_usage"]
    assert list(schema["function"]["parameters"]["properties"]) == ["path"]

    everything = [
        *transport.bodies,
        json.dumps([{"messages": r.messages, "tools": r.tools} for r in backend.requests]).encode(),
        json.dumps(result.to_dict(), default=str).encode(),
        caplog.text.encode(),
    ]
    stored = [p.read_bytes() for p in (tmp_path / "center").rglob("*") if p.is_file()]
    assert any(FOLDER.encode() in blob for blob in stored)  # the conversation is stored there
    assert any(b"disk_usage" in body for body in transport.bodies)
    for blob in everything + stored:
        assert SECRET.encode() not in blob
