"""The key that encrypts secrets at rest, kept away from the database it protects.

Where the key is looked for, in order:

1. `JARVIS_SECRET_KEY`, a key from the operator's own secret manager;
2. the OS keyring (`keyring`: Secret Service, macOS Keychain, Windows Credential Locker),
   service `jarvis`, one entry per data folder;
3. the key file `node-<id>.key` in the key folder: `JARVIS_KEY_DIR`, else
   `$XDG_CONFIG_HOME/jarvis/keys` (`~/.config/jarvis/keys`), a 0700 folder that must not
   lie inside the data folder.

`JARVIS_SECRET_KEY_STORE` picks where a new key goes: `auto` (the keyring when a secure
one is available, else the key file), `keyring` or `file`. A `secret.key` found beside the
database, where Jarvis once kept it, is moved there the first time the key is needed:
written, read back, then deleted.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import keyring
from cryptography.fernet import Fernet
from keyring.backends import fail
from keyring.errors import KeyringError

__all__ = [
    "ENV_KEY",
    "LEGACY_KEY_FILE_NAME",
    "SecretKeyError",
    "key_dir",
    "key_location",
    "load_key",
    "new_key",
]

log = logging.getLogger(__name__)

ENV_KEY = "JARVIS_SECRET_KEY"
ENV_KEY_DIR = "JARVIS_KEY_DIR"
ENV_KEY_STORE = "JARVIS_SECRET_KEY_STORE"
LEGACY_KEY_FILE_NAME = "secret.key"
KEYRING_SERVICE = "jarvis"
# keyring's own scale: 1 and above are the recommended (encrypted, OS-provided) backends.
_SECURE_KEYRING_PRIORITY = 1
_STORES = ("auto", "keyring", "file")


class SecretKeyError(Exception):
    """The encryption key is invalid, missing while secrets exist, or not the one used."""


def _fernet(raw: bytes, origin: str) -> Fernet:
    try:
        return Fernet(raw.strip())
    except ValueError as exc:
        raise SecretKeyError(
            f"{origin} is not a valid key (32 url-safe base64-encoded bytes); generate one with: "
            "python -c \"from cryptography.fernet import Fernet; "
            "print(Fernet.generate_key().decode())\""
        ) from exc


def _data_id(data_dir: Path) -> str:
    """A short, stable name for one data folder, so several nodes can share a key folder."""
    return hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]


def key_dir(data_dir: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The folder of key files; refused when it lies inside the data folder."""
    env = os.environ if environ is None else environ
    configured = env.get(ENV_KEY_DIR, "").strip()
    if configured:
        folder = Path(configured).expanduser()
    else:
        config = env.get("XDG_CONFIG_HOME", "").strip()
        folder = (Path(config) if config else Path.home() / ".config") / "jarvis" / "keys"
    if folder.resolve().is_relative_to(data_dir.resolve()):
        raise SecretKeyError(
            f"the key folder {folder} lies inside the data folder {data_dir}: a copy of the "
            f"data would carry its key; set {ENV_KEY_DIR} to a folder outside it"
        )
    return folder


class _Place(Protocol):
    def read(self) -> bytes | None: ...
    def write(self, key: bytes) -> None: ...
    def describe(self) -> str: ...


@dataclass(frozen=True)
class _KeyFile:
    """`node-<id>.key` in a folder only its owner can open."""

    path: Path

    def read(self) -> bytes | None:
        return self.path.read_bytes() if self.path.exists() else None

    def write(self, key: bytes) -> None:
        _private_folder(self.path.parent)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(fd, 0o600)  # the umask must not widen or narrow it
            os.write(fd, key + b"\n")
        finally:
            os.close(fd)

    def describe(self) -> str:
        return str(self.path)


def _private_folder(folder: Path) -> None:
    """Create the key folder with mode 0700; an existing one others can open is refused."""
    if not folder.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=0o700)
        folder.chmod(0o700)  # the umask must not widen or narrow it
        return
    mode = stat.S_IMODE(folder.stat().st_mode)
    if mode & 0o077:
        raise SecretKeyError(
            f"the key folder {folder} can be opened by other users (mode {mode:o}); "
            f"run: chmod 700 {folder}"
        )


@dataclass(frozen=True)
class _KeyringEntry:
    """One entry of the OS keyring."""

    backend: Any
    username: str

    def read(self) -> bytes | None:
        try:
            value = self.backend.get_password(KEYRING_SERVICE, self.username)
        except KeyringError as exc:  # a locked or unreachable keyring
            raise SecretKeyError(f"{self.describe()} cannot be read: {exc}") from exc
        return value.encode() if value else None

    def write(self, key: bytes) -> None:
        if self.read() is not None:
            raise SecretKeyError(f"{self.describe()} already holds a key; it is never replaced")
        try:
            self.backend.set_password(KEYRING_SERVICE, self.username, key.decode())
        except KeyringError as exc:
            raise SecretKeyError(f"{self.describe()} cannot be written: {exc}") from exc

    def describe(self) -> str:
        backend = type(self.backend).__name__
        return f"the OS keyring ({backend}, service '{KEYRING_SERVICE}', entry '{self.username}')"


def _store_choice(env: Mapping[str, str]) -> str:
    choice = env.get(ENV_KEY_STORE, "auto").strip().lower() or "auto"
    if choice not in _STORES:
        raise SecretKeyError(f"{ENV_KEY_STORE} must be one of {', '.join(_STORES)}, not {choice!r}")
    return choice


def _keyring(data_dir: Path, choice: str) -> _KeyringEntry | None:
    """The keyring entry to use: a secure backend in auto mode, any working one when asked."""
    if choice == "file":
        return None
    backend = keyring.get_keyring()
    usable = not isinstance(backend, fail.Keyring)
    if choice == "keyring" and not usable:
        raise SecretKeyError(
            f"{ENV_KEY_STORE}=keyring but no OS keyring is available; use {ENV_KEY_STORE}=file"
        )
    if choice == "auto" and (not usable or backend.priority < _SECURE_KEYRING_PRIORITY):
        return None
    return _KeyringEntry(backend, f"secret-key:{data_dir.resolve()}")


def _places(data_dir: Path, env: Mapping[str, str]) -> list[_Place]:
    """Where the key may be, the place a new key goes first."""
    entry = _keyring(data_dir, _store_choice(env))
    file = _KeyFile(key_dir(data_dir, env) / f"node-{_data_id(data_dir)}.key")
    return [entry, file] if entry is not None else [file]


def key_location(data_dir: Path) -> str:
    """Where this data folder's key is (or would be) kept, for messages."""
    return _places(data_dir, os.environ)[0].describe()


def _migrate(data_dir: Path, places: list[_Place]) -> None:
    """Move a key left beside the database to its own place; never loses or forks a key."""
    legacy = data_dir / LEGACY_KEY_FILE_NAME
    if not legacy.exists():
        return
    raw = legacy.read_bytes().strip()
    _fernet(raw, str(legacy))
    for place in places:
        found = place.read()
        if found is not None and found.strip() != raw:
            raise SecretKeyError(
                f"{legacy} and {place.describe()} hold different keys; keep the one the "
                "secrets were stored with and remove the other"
            )
        if found is not None:
            legacy.unlink()
            return
    target = places[0]
    target.write(raw)
    if (target.read() or b"").strip() != raw:
        raise SecretKeyError(f"the key could not be moved to {target.describe()}")
    legacy.unlink()
    log.warning("moved the secrets key from %s to %s", legacy, target.describe())


def load_key(data_dir: Path) -> Fernet | None:
    """The configured key, or None when there is none yet."""
    configured = os.environ.get(ENV_KEY, "").strip()
    if configured:
        return _fernet(configured.encode(), ENV_KEY)
    places = _places(data_dir, os.environ)
    _migrate(data_dir, places)
    for place in places:
        raw = place.read()
        if raw is not None:
            return _fernet(raw, place.describe())
    return None


def new_key(data_dir: Path) -> Fernet:
    """Create and keep a new key (keyring or key file); an existing key is never replaced."""
    place = _places(data_dir, os.environ)[0]
    key = Fernet.generate_key()
    place.write(key)
    return Fernet(key)
