"""Which MCP servers a node uses: `<data dir>/mcp_servers.yaml` or `JARVIS_MCP_SERVERS`.

```yaml
servers:
  time:
    command: mcp-server-time --local-timezone Europe/Paris
  github:
    command: [github-mcp-server, stdio]
    env:
      GITHUB_PERSONAL_ACCESS_TOKEN: {secret: GITHUB_TOKEN}
  search:
    url: http://127.0.0.1:9000/mcp
    headers:
      Authorization: {secret: SEARCH_AUTHORIZATION}
    call_timeout: 20
```

A `{secret: KEY}` value (optionally `scope: node`) is read from the node's encrypted
secrets when the server starts; the file holds only the reference, never the value.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from jarvis.sdk import JarvisSecret

__all__ = [
    "McpConfigError",
    "McpServerConfig",
    "SecretRef",
    "load_mcp_config",
]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_KNOWN_KEYS = {"command", "url", "env", "headers", "cwd", "call_timeout", "start_timeout",
               "ping_interval"}


class McpConfigError(ValueError):
    """The MCP server list cannot be read; the message names the file and the entry."""


@dataclass(frozen=True)
class SecretRef:
    """A value to be read from the node's secrets when the server starts."""

    key: str
    scope: str = "integration"


Value = str | SecretRef


@dataclass(frozen=True)
class McpServerConfig:
    """One MCP server: a command line (stdio) or a URL (streamable HTTP)."""

    name: str
    command: list[str] = field(default_factory=list)
    url: str | None = None
    env: dict[str, Value] = field(default_factory=dict)
    headers: dict[str, Value] = field(default_factory=dict)
    cwd: str | None = None
    call_timeout: float = 30.0
    start_timeout: float = 15.0
    ping_interval: float = 30.0

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def secrets(self) -> list[JarvisSecret]:
        """The node secrets this server needs, declared by each of its commands."""
        refs = [v for v in (*self.env.values(), *self.headers.values()) if isinstance(v, SecretRef)]
        return [
            JarvisSecret(ref.key, f"used by the MCP server '{self.name}'", scope=ref.scope)  # type: ignore[arg-type]
            for ref in refs
        ]


def load_mcp_config(path: Path) -> list[McpServerConfig]:
    """The servers listed in `path` (none when the file does not exist)."""
    if not path.exists():
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise McpConfigError(f"{path}: cannot be read: {exc}") from exc
    servers = data.get("servers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(f"{path}: expected a 'servers:' mapping of name -> settings")
    return [_server(path, str(name), entry) for name, entry in servers.items()]


def _server(path: Path, name: str, entry: Any) -> McpServerConfig:
    where = f"{path}: server '{name}'"
    if not _NAME.match(name):
        raise McpConfigError(f"{where}: a name is 1-32 letters, digits, '_' or '-'")
    if not isinstance(entry, dict):
        raise McpConfigError(f"{where}: expected a mapping with 'command' or 'url'")
    unknown = sorted(set(entry) - _KNOWN_KEYS)
    if unknown:
        raise McpConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(_KNOWN_KEYS))}")
    if ("command" in entry) == ("url" in entry):
        raise McpConfigError(f"{where}: give exactly one of 'command' (stdio) or 'url' (HTTP)")
    return McpServerConfig(
        name=name,
        command=_command(where, entry.get("command")),
        url=_url(where, entry.get("url")),
        env=_values(where, "env", entry.get("env")),
        headers=_values(where, "headers", entry.get("headers")),
        cwd=str(entry["cwd"]) if entry.get("cwd") else None,
        call_timeout=_seconds(where, "call_timeout", entry.get("call_timeout", 30.0)),
        start_timeout=_seconds(where, "start_timeout", entry.get("start_timeout", 15.0)),
        ping_interval=_seconds(where, "ping_interval", entry.get("ping_interval", 30.0)),
    )


def _command(where: str, raw: Any) -> list[str]:
    if raw is None:
        return []
    argv = shlex.split(raw) if isinstance(raw, str) else raw
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str | int) for a in argv):
        raise McpConfigError(f"{where}: 'command' is a command line or a list of words")
    return [str(a) for a in argv]


def _url(where: str, raw: Any) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.startswith(("http://", "https://")):
        raise McpConfigError(f"{where}: 'url' must start with http:// or https://")
    return raw


def _values(where: str, key: str, raw: Any) -> dict[str, Value]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise McpConfigError(f"{where}: '{key}' is a mapping of name -> value or {{secret: KEY}}")
    out: dict[str, Value] = {}
    for name, value in raw.items():
        if isinstance(value, dict):
            if not isinstance(value.get("secret"), str) or set(value) - {"secret", "scope"}:
                raise McpConfigError(f"{where}: {key}.{name} must be {{secret: KEY}} "
                                     "(optionally with scope)")
            out[str(name)] = SecretRef(value["secret"], str(value.get("scope", "integration")))
        elif isinstance(value, str | int | float | bool):
            out[str(name)] = str(value)
        else:
            raise McpConfigError(f"{where}: {key}.{name} must be text or {{secret: KEY}}")
    return out


def _seconds(where: str, key: str, raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw <= 0:
        raise McpConfigError(f"{where}: '{key}' is a number of seconds above 0")
    return float(raw)
