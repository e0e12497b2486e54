"""The remembered tool lists: round trip, and unreadable or unwritable files are not fatal."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest

from jarvis.node.mcp.tool_cache import load_tools, save_tools

TOOL = types.Tool(name="lookup", description="Look a word up",
                  input_schema={"type": "object", "properties": {"word": {"type": "string"}},
                                "required": ["word"]})


def test_round_trip(tmp_path: Path) -> None:
    save_tools(tmp_path / "mcp", "dictionary", [TOOL])
    assert load_tools(tmp_path / "mcp", "dictionary") == [TOOL]
    assert load_tools(tmp_path / "mcp", "other") is None


def test_an_unreadable_list_is_none(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "dictionary.tools.json").write_text('[{"name": 3}')
    assert load_tools(tmp_path, "dictionary") is None
    assert "unreadable" in caplog.text


def test_an_unwritable_folder_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    save_tools(blocked, "dictionary", [TOOL])
    assert "cannot remember its tools" in caplog.text
