"""Secrets a command needs (API keys, URLs), and the store protocol the node implements."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["EnvironmentSecretStore", "JarvisSecret", "MissingSecretsError", "SecretStore"]

SecretScope = Literal["integration", "node", "user"]


@dataclass(frozen=True)
class JarvisSecret:
    """A named secret; `value_type` says how to prompt for it (string, int, url, bool)."""

    key: str
    description: str = ""
    scope: SecretScope = "integration"
    value_type: str = "string"
    required: bool = True
    is_sensitive: bool = True


class MissingSecretsError(Exception):
    """Raised by `execute` before anything runs when required secrets have no value."""

    def __init__(self, missing: list[str], command_name: str | None = None) -> None:
        self.missing = list(missing)
        self.command_name = command_name
        where = f" for '{command_name}'" if command_name else ""
        super().__init__(
            f"Missing secrets{where}: {', '.join(self.missing)}. "
            f"Set them with: jarvis secrets set {self.missing[0] if self.missing else 'KEY'}"
        )


@runtime_checkable
class SecretStore(Protocol):
    """Where secret values live; the node's store encrypts them at rest."""

    def get_secret(self, key: str, scope: str = "integration") -> str | None: ...


class EnvironmentSecretStore:
    """Reads secrets from environment variables of the same name (for scripts and tests)."""

    def get_secret(self, key: str, scope: str = "integration") -> str | None:
        value = os.environ.get(key)
        return value if value else None
