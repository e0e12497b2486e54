"""Helpers for the built-in command tests: secrets, contexts, a loopback HTTP server."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jarvis.commands
from jarvis.sdk import CommandContext, IJarvisCommand, MemoryStorage, RequestInformation

TZ = "America/New_York"


class DictSecrets:
    """A `SecretStore` over a dict: {(key, scope): value} or {key: value} for any scope."""

    def __init__(self, values: dict[Any, str] | None = None) -> None:
        self.values = dict(values or {})

    def get_secret(self, key: str, scope: str = "integration") -> str | None:
        return self.values.get((key, scope)) or self.values.get(key)


def make_context(secrets: dict[Any, str] | None = None, tz: str = TZ) -> CommandContext:
    return CommandContext(secrets=DictSecrets(secrets), storage=MemoryStorage(), timezone=tz)


def request(voice_command: str = "", tz: str | None = TZ) -> RequestInformation:
    return RequestInformation(voice_command=voice_command, timezone=tz)


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


Handler = Callable[[Recorded], tuple[int, Any]]


@dataclass
class LocalServer:
    """A real HTTP server on 127.0.0.1; routes map (method, path) to a handler.

    A path ending in "/*" matches every path under it.
    """

    routes: dict[tuple[str, str], Handler] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""

    def route(self, method: str, path: str, handler: Handler | tuple[int, Any]) -> None:
        self.routes[(method, path)] = handler if callable(handler) else (lambda _r: handler)


def builtin_commands() -> list[IJarvisCommand]:
    """What the node does: concrete IJarvisCommand classes defined in jarvis.commands modules."""
    found = []
    for info in pkgutil.iter_modules(jarvis.commands.__path__):
        module = importlib.import_module(f"jarvis.commands.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (issubclass(cls, IJarvisCommand) and cls.__module__ == module.__name__
                    and not inspect.isabstract(cls)):
                found.append(cls())
    return found
