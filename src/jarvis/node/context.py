"""What a node's commands are bound to: its secrets, storage, data folder and timezone."""

from __future__ import annotations

from jarvis.node.registry import CommandRegistry, discover_commands
from jarvis.node.settings import NodeSettings
from jarvis.node.store import NodeStore
from jarvis.sdk import CommandContext

__all__ = ["command_context", "load_registry"]


def command_context(settings: NodeSettings, store: NodeStore) -> CommandContext:
    """What every command gets: encrypted secrets, SQLite storage, data folder, timezone."""
    return CommandContext(
        secrets=store.secrets,
        storage=store.storage,
        data_dir=settings.data_dir,
        timezone=settings.timezone,
    )


def load_registry(settings: NodeSettings, store: NodeStore) -> CommandRegistry:
    """Every command this node offers, discovered from all sources and bound to the store."""
    return discover_commands(command_context(settings, store))
