"""What the node gives a command at run time: its secrets, its storage and its data folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from jarvis.sdk.secrets import EnvironmentSecretStore, SecretStore

__all__ = ["CommandContext", "CommandStorage", "MemoryStorage"]


@runtime_checkable
class CommandStorage(Protocol):
    """A small JSON key-value store, one namespace per command (lists, timers, ...)."""

    def get(self, namespace: str, key: str, default: Any = None) -> Any: ...

    def set(self, namespace: str, key: str, value: Any) -> None: ...

    def delete(self, namespace: str, key: str) -> None: ...

    def items(self, namespace: str) -> dict[str, Any]: ...


class MemoryStorage:
    """An in-memory `CommandStorage` for scripts and tests; the node persists in SQLite."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}

    def get(self, namespace: str, key: str, default: Any = None) -> Any:
        return self._data.get(namespace, {}).get(key, default)

    def set(self, namespace: str, key: str, value: Any) -> None:
        self._data.setdefault(namespace, {})[key] = value

    def delete(self, namespace: str, key: str) -> None:
        self._data.get(namespace, {}).pop(key, None)

    def items(self, namespace: str) -> dict[str, Any]:
        return dict(self._data.get(namespace, {}))


@dataclass
class CommandContext:
    """Set on every command by the node's registry; defaults suit a script or a test."""

    secrets: SecretStore = field(default_factory=EnvironmentSecretStore)
    storage: CommandStorage = field(default_factory=MemoryStorage)
    data_dir: Path | None = None
    timezone: str | None = None
