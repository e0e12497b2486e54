"""The examples of docs/mcp.md run and say what the page says they say."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from mcp_helpers import SRC

from jarvis.node.mcp import SecretRef, load_mcp_config

DOCS = SRC.parent / "docs"


def test_the_server_list_example_loads() -> None:
    time, github, search = load_mcp_config(DOCS / "examples" / "mcp" / "mcp_servers.yaml")
    assert time.command == ["mcp-server-time", "--local-timezone", "Europe/Paris"]
    assert github.env == {"GITHUB_PERSONAL_ACCESS_TOKEN": SecretRef("GITHUB_TOKEN")}
    assert search.headers == {"Authorization": SecretRef("SEARCH_AUTHORIZATION")}
    page = (DOCS / "mcp.md").read_text(encoding="utf-8")
    assert "mcp-server-time --local-timezone Europe/Paris" in page


def test_the_client_configuration_is_json_that_starts_the_server() -> None:
    page = (DOCS / "mcp.md").read_text(encoding="utf-8")
    block = re.search(r"```json\n(.*?)```", page, re.S)
    assert block is not None
    server = json.loads(block.group(1))["mcpServers"]["jarvis"]
    assert server["command"].endswith("/jarvis") and server["args"] == ["mcp", "serve"]


def test_the_client_example_prints_what_the_page_shows(data_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC), "JARVIS_DATA_DIR": str(data_dir)}
    run = subprocess.run([sys.executable, str(DOCS / "examples" / "mcp_client.py")], env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    page = (DOCS / "mcp.md").read_text(encoding="utf-8")
    shown = re.search(r"\$ python docs/examples/mcp_client.py.*?\n(.*?)```", page, re.S)
    assert shown is not None
    assert run.stdout.splitlines() == shown.group(1).strip().splitlines()
