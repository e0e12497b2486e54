"""The key that encrypts secrets at rest: `JARVIS_SECRET_KEY`, else `<data_dir>/secret.key`."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.fernet import Fernet

__all__ = ["KEY_FILE_NAME", "SecretKeyError", "key_file_path", "load_key", "new_key_file"]

KEY_FILE_NAME = "secret.key"
ENV_KEY = "JARVIS_SECRET_KEY"


class SecretKeyError(Exception):
    """The encryption key is invalid, missing while secrets exist, or not the one used."""


def key_file_path(data_dir: Path) -> Path:
    return data_dir / KEY_FILE_NAME


def _fernet(raw: bytes, origin: str) -> Fernet:
    try:
        return Fernet(raw.strip())
    except ValueError as exc:
        raise SecretKeyError(
            f"{origin} is not a valid key (32 url-safe base64-encoded bytes); generate one with: "
            "python -c \"from cryptography.fernet import Fernet; "
            "print(Fernet.generate_key().decode())\""
        ) from exc


def load_key(data_dir: Path) -> Fernet | None:
    """The configured key, or None when neither the variable nor the key file exists."""
    configured = os.environ.get(ENV_KEY, "").strip()
    if configured:
        return _fernet(configured.encode(), ENV_KEY)
    path = key_file_path(data_dir)
    if not path.exists():
        return None
    return _fernet(path.read_bytes(), str(path))


def new_key_file(data_dir: Path) -> Fernet:
    """Create the key file, readable by its owner only; never replaces an existing one."""
    path = key_file_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = Fernet.generate_key()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # the umask must not widen or narrow it
        os.write(fd, key + b"\n")
    finally:
        os.close(fd)
    return Fernet(key)
