"""What a node's commands are bound to: its secrets, storage, data folder and timezone."""

from __future__ import annotations

import logging

from jarvis.node.registry import CommandRegistry, RegistryProblem, discover_commands
from jarvis.node.settings import NodeSettings
from jarvis.node.store import NodeStore
from jarvis.sdk import CommandContext

__all__ = ["command_context", "load_registry"]

log = logging.getLogger(__name__)


def command_context(settings: NodeSettings, store: NodeStore) -> CommandContext:
    """What every command gets: encrypted secrets, SQLite storage, data folder, timezone."""
    return CommandContext(
        secrets=store.secrets,
        storage=store.storage,
        data_dir=settings.data_dir,
        timezone=settings.timezone,
    )


def load_registry(settings: NodeSettings, store: NodeStore) -> CommandRegistry:
    """Every command this node offers, discovered from all sources and bound to the store.

    The tools of the MCP servers in `mcp_servers.yaml` come last; their processes stay up
    until `registry.close()`.
    """
    context = command_context(settings, store)
    registry = discover_commands(context, builtins_off=settings.builtins_off)
    _add_mcp_servers(registry, settings, context)
    return registry


def _add_mcp_servers(registry: CommandRegistry, settings: NodeSettings,
                     context: CommandContext) -> None:
    from jarvis.node.mcp import McpConfigError, add_mcp_commands, load_mcp_config

    path = settings.mcp_config
    try:
        servers = load_mcp_config(path)
    except McpConfigError as exc:
        registry.problems.append(RegistryProblem(str(path), str(exc)))
        log.warning("command registry: %s", exc)
        return
    if not servers:
        return
    count, known_problems = len(registry), len(registry.problems)
    add_mcp_commands(registry, servers, context.secrets, tools_dir=settings.data_dir / "mcp")
    registry.bind(context)
    for problem in registry.problems[known_problems:]:
        log.warning("command registry: %s", problem)
    log.info("%d command(s) from %d MCP server(s)", len(registry) - count, len(servers))
