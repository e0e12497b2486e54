"""Center settings: command-line flags, then the environment, then a config file, then defaults.

The config file is TOML: `JARVIS_CONFIG`, else `<data_dir>/center.toml`. Its keys are the
field names below, at the top level or under a `[center]` table. Environment variables
are `JARVIS_` + the field name in capitals (e.g. `JARVIS_DATABASE_URL`).
"""

from __future__ import annotations

import os
import ssl
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

__all__ = ["DEFAULT_PORT", "CenterSettings", "SettingsError", "load_settings"]

DEFAULT_PORT = 7700

BackendName = Literal["embedded", "openai", "scripted"]


class SettingsError(ValueError):
    """A setting has a bad value or the config file cannot be read."""


class CenterSettings(BaseModel):
    """Everything the command center can be configured with."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    data_dir: Path | None = None
    database_url: str | None = None
    durable_commits: bool = False
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)

    llm_backend: BackendName = "embedded"
    llm_base_url: str = "http://127.0.0.1:8080/v1"
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout: float = Field(default=60.0, gt=0)
    llm_max_tokens: int = Field(default=512, ge=16)
    llm_script: Path | None = None
    llm_script_loop: bool = False

    max_retries: int = Field(default=2, ge=0, le=10)
    max_tool_loops: int = Field(default=4, ge=1, le=20)
    direct_tool_message: bool = True
    history_messages: int = Field(default=40, ge=2)
    digits_for_numbers: bool = True
    # Weigh requests against each tool's declaration by meaning with the sentence encoder
    # (`jarvis model prepare`): "auto" when it is prepared, "on" (refuse to start without
    # it) or "off" (words only).
    relatedness: Literal["auto", "on", "off"] = "auto"
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    rate_limit_per_minute: float = Field(default=120.0, ge=0)
    rate_limit_burst: int = Field(default=30, ge=1)
    retention_days: float = Field(default=30.0, ge=0)
    retention_interval: float = Field(default=3600.0, gt=0)
    ssl_certfile: Path | None = None
    ssl_keyfile: Path | None = None
    log_level: str = "info"
    # "json": one JSON object per log line (for log collectors); "text": plain lines.
    log_format: Literal["text", "json"] = "text"
    # Guards the console and the read API; sent as `Authorization: Bearer <token>`. Unset:
    # `jarvis serve` generates one at its first start (only its digest is kept).
    admin_token: SecretStr | None = None
    # Serve nodes without keys (anyone who can connect is trusted): loopback addresses only.
    insecure_no_auth: bool = False

    @model_validator(mode="after")
    def _tls_pair(self) -> CenterSettings:
        if (self.ssl_certfile is None) != (self.ssl_keyfile is None):
            raise ValueError("ssl_certfile and ssl_keyfile go together: set both or neither")
        if self.ssl_certfile is not None and self.ssl_keyfile is not None:
            _check_tls(Path(self.ssl_certfile), Path(self.ssl_keyfile))
        return self

    @model_validator(mode="after")
    def _no_auth_on_loopback(self) -> CenterSettings:
        from jarvis.center.auth import check_no_auth_bind

        check_no_auth_bind(self.insecure_no_auth, self.host)
        return self

    @property
    def tls(self) -> bool:
        """Whether the center serves HTTPS."""
        return self.ssl_certfile is not None

    def resolved_data_dir(self) -> Path:
        """The data folder, created on first use."""
        if self.data_dir is not None:
            path = Path(self.data_dir).expanduser()
            path.mkdir(parents=True, exist_ok=True)
            return path
        from jarvis.paths import data_dir

        return data_dir()

    def resolved_database_url(self) -> str:
        """`database_url`, else a SQLite file `<data_dir>/center.db`."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.resolved_data_dir() / 'center.db'}"

    def redacted(self) -> dict[str, Any]:
        """The settings for logs and `jarvis serve --show-settings`: no secrets."""
        data = self.model_dump(mode="json")
        if self.llm_api_key is not None:
            data["llm_api_key"] = "********"
        if self.admin_token is not None:
            data["admin_token"] = "********"
        data["database_url"] = _redact_url(self.resolved_database_url())
        return data


def _check_tls(certfile: Path, keyfile: Path) -> None:
    """Refuse a certificate and key that uvicorn could not serve, before it tries."""
    for path in (certfile, keyfile):
        if not path.expanduser().is_file():
            raise ValueError(f"TLS file {path} does not exist")
    try:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(certfile.expanduser()), str(keyfile.expanduser()))
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(f"cannot serve TLS with {certfile} and {keyfile}: {exc}") from exc


def _redact_url(url: str) -> str:
    """Hide a password in a database URL."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    creds, _, host = rest.rpartition("@")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in creds else url


_FIELDS = tuple(CenterSettings.model_fields)


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in _FIELDS:
        value = env.get(f"JARVIS_{name.upper()}")
        if value is not None and value != "":
            out[name] = value
    return out


def _config_path(env: Mapping[str, str], data_dir: Path | None) -> Path | None:
    explicit = env.get("JARVIS_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = data_dir or (Path(env["JARVIS_DATA_DIR"]).expanduser() if env.get("JARVIS_DATA_DIR")
                        else Path.home() / ".local/share/jarvis")
    return base / "center.toml"


def _from_file(path: Path | None, required: bool) -> dict[str, Any]:
    if path is None or not path.exists():
        if required and path is not None:
            raise SettingsError(f"config file {path} does not exist")
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"cannot read config file {path}: {exc}") from exc
    section = data.get("center", data)
    if not isinstance(section, dict):
        raise SettingsError(f"{path}: [center] must be a table")
    unknown = sorted(k for k in section if k not in _FIELDS)
    if unknown:
        raise SettingsError(f"{path}: unknown setting(s) {', '.join(unknown)}")
    return dict(section)


def load_settings(
    overrides: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> CenterSettings:
    """Merge flags (`overrides`, None values ignored) > environment > config file > defaults."""
    env = os.environ if env is None else env
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    from_env = _from_env(env)
    data_dir = flags.get("data_dir") or from_env.get("data_dir")
    path = _config_path(env, Path(data_dir).expanduser() if data_dir else None)
    merged = {**_from_file(path, required=bool(env.get("JARVIS_CONFIG"))), **from_env, **flags}
    try:
        return CenterSettings(**merged)
    except ValidationError as exc:
        problems = "; ".join(
            ": ".join(filter(None, (".".join(str(p) for p in e["loc"]), e["msg"])))
            for e in exc.errors()
        )
        raise SettingsError(f"invalid center settings: {problems}") from exc
