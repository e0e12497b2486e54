"""The tools each MCP server listed last time, kept in `<data dir>/mcp/<server>.tools.json`.

A server that cannot start when the node starts still has its commands, from this list:
each call then says why the server is unavailable, and works again once the server is
back (it is restarted with back-off), instead of the tools silently disappearing.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import mcp_types as types
from pydantic import ValidationError

__all__ = ["load_tools", "save_tools"]

log = logging.getLogger(__name__)


def _path(directory: Path, server: str) -> Path:
    return directory / f"{server}.tools.json"


def save_tools(directory: Path, server: str, tools: list[types.Tool]) -> None:
    """Remember a server's tools; a failure to write is logged, never raised."""
    data = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        temporary = _path(directory, server).with_suffix(".tmp")
        temporary.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        temporary.replace(_path(directory, server))  # never a half-written list
    except OSError as exc:
        log.warning("MCP server %s: cannot remember its tools: %s", server, exc)


def load_tools(directory: Path, server: str) -> list[types.Tool] | None:
    """The tools remembered for a server, or None when there are none (or they are unreadable)."""
    path = _path(directory, server)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [types.Tool.model_validate(item) for item in data]
    except (OSError, ValueError, TypeError, ValidationError) as exc:
        log.warning("MCP server %s: its remembered tools in %s are unreadable: %s",
                    server, path, exc)
        return None
