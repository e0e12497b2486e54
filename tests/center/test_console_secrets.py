"""No page or read-API answer shows a secret or an override value (planted on purpose).

A real node (registry, YAML tool with an override read from the environment, a program
that prints its key) talks to a real center served by uvicorn on a loopback port; the
center's settings hold an LLM API key and the admin token; the scripted LLM even repeats
the admin token in an answer. Then every console page, read-API answer and `/metrics`
is read and searched.
"""

from __future__ import annotations

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

OVERRIDE = "planted-Override-Value-71c2"
API_KEY = "planted-LLM-Api-Key-0e9d"
ADMIN = "planted-Admin-Token-a44f"
PLANTED = (OVERRIDE, API_KEY, ADMIN)

PROGRAM = """\
#!{python}
import sys
# A careless program that prints its key: the node masks it before anything leaves.
print(f"uploaded {{sys.argv[-1]}} with key={{sys.argv[2]}}")
"""


@pytest.fixture
def node_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "node"
    (data / "tools").mkdir(parents=True)
    monkeypatch.setenv("JARVIS_DATA_DIR", str(data))
    monkeypatch.delenv("JARVIS_TOOLS", raising=False)
    monkeypatch.setenv("JARVIS_PLANTED_KEY", OVERRIDE)
    program = tmp_path / "upload_program"
    program.write_text(PROGRAM.format(python=sys.executable))
    program.chmod(0o755)
    (data / "tools" / "upload.yaml").write_text(
        f"""\
tools:
  - name: upload_file
    description: Upload a file to the backup service
    exec: ["{program}", "--key", "{{api_key}}", "--", "{{path}}"]
    params:
      - name: path
        description: File to upload
        example: /home/me/notes.txt
      - name: api_key
        override: "${{JARVIS_PLANTED_KEY}}"
"""
    )
    return data


def _everything(url: str, cid: str) -> dict[str, str]:
    auth = {"Authorization": f"Bearer {ADMIN}"}
    paths = ["/api/v0/nodes", "/api/v0/conversations", f"/api/v0/conversations/{cid}",
             "/console", f"/console/conversations/{cid}", "/console/commands",
             "/console/model", "/console/try", "/metrics", "/openapi.json", "/health"]
    with httpx.Client(base_url=url, headers=auth) as client:
        pages = {path: client.get(path) for path in paths}
    for path, response in pages.items():
        assert response.status_code == 200, (path, response.text)
    return {path: response.text for path, response in pages.items()}


def test_no_page_or_answer_shows_a_planted_secret(node_data: Path, tmp_path: Path) -> None:
    def answer(request: LLMRequest) -> LLMReply:
        tool_messages = [m for m in request.messages if m.get("role") == "tool"]
        assert "key=[hidden]" in tool_messages[-1]["content"]
        return text(f"Uploaded. (The console token is {ADMIN}.)")

    backend = ScriptedBackend([tool_call("upload_file", path="/home/me/notes.txt"), answer])
    settings = CenterSettings(data_dir=tmp_path / "center", log_level="warning",
                              direct_tool_message=False, admin_token=ADMIN,
                              llm_api_key=API_KEY)
    node = NodeSettings(data_dir=node_data, timezone="Europe/Paris", node_id="office")
    registry = discover_commands(command_context(node, NodeStore(node_data)),
                                 builtins=False, entry_points_enabled=False)
    assert "upload_file" in registry, registry.problems

    with CenterServer(settings, backend) as server:
        client = JarvisCommandCenterClient(server.url, key=server.add_node("node"))
        result = CommandExecutionService(registry, client, node).process_voice_command(
            "upload the file /home/me/notes.txt")
        client.close()
        [cid] = [c["id"] for c in httpx.get(
            f"{server.url}/api/v0/conversations",
            headers={"Authorization": f"Bearer {ADMIN}"}).json()["conversations"]]
        pages = _everything(server.url, cid)

    assert result.stop_reason == "complete"
    # The pages do show the conversation: the search below looks at the right text.
    assert "/home/me/notes.txt" in pages[f"/console/conversations/{cid}"]
    assert "upload_file" in pages["/console/commands"]
    assert "[hidden]" in pages[f"/api/v0/conversations/{cid}"]
    for path, body in pages.items():
        for secret in PLANTED:
            assert secret not in body, f"{path} shows {secret}"
