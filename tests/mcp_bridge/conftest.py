"""Fixtures of the MCP tests: an isolated node data folder and the sample server's command."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp_helpers import SAMPLE_SERVER


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh `JARVIS_DATA_DIR`, with no key, center, tool or MCP paths leaking in."""
    path = tmp_path / "jarvis-data"
    path.mkdir()
    monkeypatch.setenv("JARVIS_DATA_DIR", str(path))
    for name in ("JARVIS_SECRET_KEY", "JARVIS_CENTER_URL", "JARVIS_CENTER_KEY", "JARVIS_TOOLS",
                 "JARVIS_CONFIG", "JARVIS_MCP_SERVERS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JARVIS_TIMEZONE", "Europe/Paris")
    return path


@pytest.fixture
def sample_command() -> list[str]:
    """The command line that starts the sample MCP server over stdio."""
    return [sys.executable, str(SAMPLE_SERVER)]
