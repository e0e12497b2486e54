"""Who and where this node is: its id, room, timezone, data folder and center URL."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from jarvis.paths import data_dir as default_data_dir

__all__ = ["NodeSettings", "node_timezone"]

_ZONEINFO_MARKER = "zoneinfo/"


def _valid_zone(name: str | None) -> str | None:
    if not name:
        return None
    name = name.strip().lstrip(":")
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    return name


def _zone_from_localtime(localtime: Path) -> str | None:
    # /etc/localtime is normally a link into .../zoneinfo/<Area>/<City>.
    try:
        target = str(localtime.resolve()) if localtime.is_symlink() else ""
    except OSError:
        return None
    if _ZONEINFO_MARKER in target:
        return _valid_zone(target.split(_ZONEINFO_MARKER, 1)[1])
    return None


def node_timezone(
    environ: dict[str, str] | None = None,
    localtime: Path = Path("/etc/localtime"),
    timezone_file: Path = Path("/etc/timezone"),
) -> str:
    """`JARVIS_TIMEZONE`, else `TZ`, else the system zone, else UTC (an IANA name)."""
    env = os.environ if environ is None else environ
    for candidate in (env.get("JARVIS_TIMEZONE"), env.get("TZ")):
        zone = _valid_zone(candidate)
        if zone:
            return zone
    zone = _zone_from_localtime(localtime)
    if zone:
        return zone
    try:
        zone = _valid_zone(timezone_file.read_text(encoding="utf-8"))
    except OSError:
        zone = None
    return zone or "UTC"


def _env_or_none(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _env_path(name: str) -> Path | None:
    value = _env_or_none(name)
    return Path(value).expanduser() if value else None


def _env_names(name: str) -> tuple[str, ...]:
    """A comma-separated list of names ("music, tell_joke")."""
    return tuple(part.strip() for part in (_env_or_none(name) or "").split(",") if part.strip())


def _env_flag(name: str, default: bool) -> bool:
    value = _env_or_none(name)
    if value is None:
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name}={value!r} is not a yes/no value (use 1 or 0)")


def _center_ca() -> Path | None:
    """`JARVIS_CENTER_CA`, which must name a readable file when set."""
    value = _env_or_none("JARVIS_CENTER_CA")
    if value is None:
        return None
    path = Path(value).expanduser()
    if not path.is_file():
        raise ValueError(f"JARVIS_CENTER_CA={value!r} is not a file (a PEM CA certificate)")
    return path


@dataclass
class NodeSettings:
    """Read from the environment by `from_env`; tests build it directly."""

    data_dir: Path = field(default_factory=default_data_dir)
    timezone: str = field(default_factory=node_timezone)
    node_id: str = field(default_factory=socket.gethostname)
    room: str | None = None
    center_url: str | None = None
    # This node's key for the center (`JARVIS_CENTER_KEY`; else the one `jarvis node login`
    # stored with the node's secrets).
    center_key: str | None = field(default=None, repr=False)
    # The CA certificate (PEM) that signed the center's https certificate (a home CA).
    center_ca: Path | None = None
    # Whether a command's missing `required_packages` are pip-installed on its first use.
    auto_install: bool = True
    # The MCP servers whose tools become commands; None: <data_dir>/mcp_servers.yaml.
    mcp_servers: Path | None = None
    # Built-in commands left out (`JARVIS_BUILTINS_OFF`): one of the user's own does their work.
    builtins_off: tuple[str, ...] = ()

    @property
    def mcp_config(self) -> Path:
        """The MCP server list: `JARVIS_MCP_SERVERS`, else `<data_dir>/mcp_servers.yaml`."""
        return self.mcp_servers or self.data_dir / "mcp_servers.yaml"

    @classmethod
    def from_env(cls, data_dir: Path | None = None, center_url: str | None = None) -> NodeSettings:
        timezone = node_timezone()
        configured = _env_or_none("JARVIS_TIMEZONE")
        if configured and configured != timezone:
            raise ValueError(f"JARVIS_TIMEZONE={configured!r} is not a known IANA timezone")
        return cls(
            data_dir=data_dir if data_dir is not None else default_data_dir(),
            timezone=timezone,
            node_id=_env_or_none("JARVIS_NODE_ID") or socket.gethostname(),
            room=_env_or_none("JARVIS_ROOM"),
            center_url=center_url or _env_or_none("JARVIS_CENTER_URL"),
            center_key=_env_or_none("JARVIS_CENTER_KEY"),
            center_ca=_center_ca(),
            auto_install=_env_flag("JARVIS_AUTO_INSTALL", True),
            mcp_servers=_env_path("JARVIS_MCP_SERVERS"),
            builtins_off=_env_names("JARVIS_BUILTINS_OFF"),
        )
