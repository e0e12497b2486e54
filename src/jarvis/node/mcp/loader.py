"""Register the tools of the node's MCP servers as commands.

A tool keeps its own name unless another command or another server's tool has it;
then every clashing tool is named `<server>_<tool>`. A server that cannot start is a
registry problem (the node runs on without its tools); one that stops later answers
each call with a sentence and is restarted with back-off.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit, urlunsplit

import mcp_types as types

from jarvis.node.mcp.config import McpServerConfig, SecretRef, Value
from jarvis.node.mcp.connection import Backoff
from jarvis.node.mcp.hub import McpHub
from jarvis.node.mcp.tool_cache import load_tools, save_tools
from jarvis.node.mcp.tool_command import McpToolCommand
from jarvis.node.registry import CommandRegistry, RegistryProblem
from jarvis.sdk import SecretStore

__all__ = ["add_mcp_commands", "server_source"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def server_source(config: McpServerConfig) -> str:
    """Where a command comes from, as `jarvis commands list` shows it (no secret values)."""
    where = _without_userinfo(config.url) if config.url else " ".join(config.command)
    return f"MCP server {config.name} ({where})"


def _without_userinfo(url: str) -> str:
    """`https://user:pass@host/mcp` -> `https://host/mcp`: credentials are never shown."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=host))


def add_mcp_commands(
    registry: CommandRegistry, servers: Iterable[McpServerConfig], secrets: SecretStore,
    *, errlog: TextIO | None = None, backoff: Backoff | None = None,
    tools_dir: Path | None = None,
) -> McpHub | None:
    """Start the servers, add their tools to `registry`; the hub is closed with the registry.

    With `tools_dir`, each server's tool list is remembered there, and a server that does
    not start keeps the commands it had last time (each call says why it is unavailable).
    """
    startable = []
    for config in servers:
        resolved = _resolve(config, secrets, registry)
        if resolved is not None:
            startable.append(resolved)
    if not startable:
        return None
    hub = McpHub(errlog=errlog)
    registry.on_close(hub.close)
    hub.start(startable, backoff=backoff)
    found: list[tuple[McpServerConfig, types.Tool]] = []
    for config, _, _ in startable:
        tools = _tools_of(registry, hub, config, tools_dir)
        found.extend((config, tool) for tool in tools)
    _register(registry, found, hub)
    return hub


def _tools_of(registry: CommandRegistry, hub: McpHub, config: McpServerConfig,
              tools_dir: Path | None) -> list[types.Tool]:
    """The server's tools as listed now, else as remembered; a server without either is a
    registry problem."""
    connection = hub.connections[config.name]
    if connection.tools is not None:
        if tools_dir is not None:
            save_tools(tools_dir, config.name, connection.tools)
        return connection.tools
    why = connection.last_error or "no answer"
    remembered = load_tools(tools_dir, config.name) if tools_dir is not None else None
    if remembered is None:
        registry.problems.append(RegistryProblem(
            server_source(config), f"not started, its tools are unavailable: {why}"))
        return []
    registry.problems.append(RegistryProblem(
        server_source(config), f"not started ({why}); its {len(remembered)} tool(s) from "
        "the last start answer that it is unavailable until it starts"))
    return remembered


def _register(registry: CommandRegistry, found: list[tuple[McpServerConfig, types.Tool]],
              hub: McpHub) -> None:
    counts = Counter(tool.name for _, tool in found)
    for config, tool in found:
        name = tool.name
        if counts[name] > 1 or name in registry or not _NAME.match(name):
            name = _UNSAFE.sub("_", f"{config.name}_{tool.name}")[:64]
        try:
            command = McpToolCommand(name, tool, config, hub)
        except Exception as exc:  # one odd schema must not hide the server's other tools
            registry.problems.append(RegistryProblem(
                server_source(config), f"tool '{tool.name}' skipped: {exc}"))
            continue
        registry.add(command, server_source(config))


def _resolve(
    config: McpServerConfig, secrets: SecretStore, registry: CommandRegistry
) -> tuple[McpServerConfig, dict[str, str], dict[str, str]] | None:
    """The config with its env and headers read from the node's secrets, or None."""
    missing: list[str] = []
    env = _values(config.env, secrets, missing)
    headers = _values(config.headers, secrets, missing)
    if missing:
        howto = " and ".join(f"jarvis secrets set {key}" for key in missing)
        registry.problems.append(RegistryProblem(
            server_source(config), f"not started: it needs {', '.join(missing)}; "
            f"set with: {howto}"))
        return None
    return config, env, headers


def _values(values: dict[str, Value], secrets: SecretStore, missing: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in values.items():
        if isinstance(value, SecretRef):
            secret = secrets.get_secret(value.key, value.scope)
            if not secret:
                missing.append(value.key)
                continue
            out[name] = secret
        else:
            out[name] = value
    return out
