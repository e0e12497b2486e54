"""Assemble a running node: settings, store, registry, center client and service."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jarvis.node.center_login import center_login
from jarvis.node.client import JarvisCommandCenterClient
from jarvis.node.context import command_context, load_registry
from jarvis.node.first_use import Progress
from jarvis.node.registry import CommandRegistry
from jarvis.node.service import CommandExecutionService, ValidationHandler
from jarvis.node.settings import NodeSettings
from jarvis.node.store import NodeStore
from jarvis.sdk import IJarvisCommand

__all__ = ["Node", "command_context", "load_registry", "open_node"]


@dataclass
class Node:
    settings: NodeSettings
    store: NodeStore
    registry: CommandRegistry
    client: JarvisCommandCenterClient | None
    service: CommandExecutionService

    def close(self) -> None:
        self.registry.close()
        if self.client is not None:
            self.client.close()
        self.store.close()

    def __enter__(self) -> Node:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_node(
    settings: NodeSettings,
    *,
    commands: Iterable[IJarvisCommand] | None = None,
    validation_handler: ValidationHandler | None = None,
    client: JarvisCommandCenterClient | None = None,
    progress: Progress | None = None,
) -> Node:
    """A node talking to `settings.center_url`; `commands` replaces discovery (tests, demos)."""
    store = NodeStore(settings.data_dir)
    # Migrate now, before the scheduler's thread or a command uses the store.
    store.migrate()
    if commands is None:
        registry = load_registry(settings, store)
    else:
        registry = CommandRegistry.from_commands(commands, command_context(settings, store))
    login = center_login(settings, store) if client is None else None
    if login is not None and login.url:
        client = JarvisCommandCenterClient(login.url, ca_file=settings.center_ca, key=login.key)
    service = CommandExecutionService(
        registry, client, settings, validation_handler=validation_handler, progress=progress
    )
    return Node(settings, store, registry, client, service)
