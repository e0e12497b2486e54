"""Secrets in the node database, encrypted with Fernet; implements the SDK `SecretStore`."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy import Engine, delete, func, insert, select, update

from jarvis.node.store import crypto
from jarvis.node.store.schema import secrets as table
from jarvis.sdk import JarvisSecret

__all__ = ["SecretRecord", "SqliteSecretStore"]

DEFAULT_SCOPE = "integration"


@dataclass(frozen=True)
class SecretRecord:
    """What may be shown about a secret: everything except its value."""

    key: str
    scope: str
    value_type: str
    required: bool
    description: str
    is_set: bool
    updated_at: datetime


def _now() -> datetime:
    return datetime.now(UTC)


class SqliteSecretStore:
    """Values are encrypted before they reach the database and decrypted only on read."""

    def __init__(self, engine_factory: Callable[[], Engine], data_dir: Path) -> None:
        self._engine_factory = engine_factory
        self._data_dir = data_dir
        self._fernet: Fernet | None = None
        self._lock = threading.Lock()

    @property
    def _engine(self) -> Engine:
        return self._engine_factory()

    # --- the key ------------------------------------------------------------------------
    def _cipher(self, create: bool) -> Fernet | None:
        with self._lock:
            if self._fernet is None:
                self._fernet = crypto.load_key(self._data_dir)
            if self._fernet is None and create:
                stored = self._count_set()
                if stored:
                    raise crypto.SecretKeyError(
                        f"{stored} secret(s) are stored encrypted but their key is missing from "
                        f"{crypto.key_location(self._data_dir)}; restore it there or set "
                        f"{crypto.ENV_KEY} to the key they were stored with"
                    )
                self._fernet = crypto.new_key(self._data_dir)
            return self._fernet

    def _count_set(self) -> int:
        with self._engine.connect() as conn:
            query = select(func.count()).where(table.c.value_encrypted.is_not(None))
            return int(conn.execute(query).scalar_one())

    def _decrypt(self, key: str, scope: str, token: bytes) -> str:
        cipher = self._cipher(create=False)
        if cipher is None:
            raise crypto.SecretKeyError(
                f"secret {key} ({scope}) is stored encrypted but no key is configured: restore "
                f"it to {crypto.key_location(self._data_dir)} or set {crypto.ENV_KEY}"
            )
        try:
            return cipher.decrypt(token).decode("utf-8")
        except InvalidToken as exc:
            raise crypto.SecretKeyError(
                f"secret {key} ({scope}) cannot be decrypted: the key differs from the one it "
                "was stored with"
            ) from exc

    # --- SecretStore protocol -----------------------------------------------------------
    def get_secret(self, key: str, scope: str = DEFAULT_SCOPE) -> str | None:
        with self._engine.connect() as conn:
            token = conn.execute(
                select(table.c.value_encrypted).where(table.c.key == key, table.c.scope == scope)
            ).scalar_one_or_none()
        if token is None:
            return None
        value = self._decrypt(key, scope, token)
        return value or None

    # --- management ---------------------------------------------------------------------
    def set_secret(
        self,
        key: str,
        value: str,
        scope: str = DEFAULT_SCOPE,
        *,
        value_type: str | None = None,
        description: str | None = None,
        required: bool | None = None,
    ) -> None:
        """Store (or replace) a value; the declared metadata is kept unless given."""
        if not key.strip():
            raise ValueError("a secret needs a key")
        cipher = self._cipher(create=True)
        assert cipher is not None
        token = cipher.encrypt(value.encode("utf-8"))
        now = _now()
        with self._engine.begin() as conn:
            exists = conn.execute(
                select(table.c.id).where(table.c.key == key, table.c.scope == scope)
            ).scalar_one_or_none()
            if exists is None:
                conn.execute(
                    insert(table).values(
                        key=key,
                        scope=scope,
                        value_type=value_type or "string",
                        required=True if required is None else required,
                        description=description or "",
                        value_encrypted=token,
                        created_at=now,
                        updated_at=now,
                    )
                )
                return
            changes: dict[str, object] = {"value_encrypted": token, "updated_at": now}
            if value_type is not None:
                changes["value_type"] = value_type
            if description is not None:
                changes["description"] = description
            if required is not None:
                changes["required"] = required
            conn.execute(update(table).where(table.c.id == exists).values(**changes))

    def seed(self, secret: JarvisSecret) -> bool:
        """Declare a secret without a value; an existing row (and its value) is kept.

        Returns True when a row was created.
        """
        now = _now()
        with self._engine.begin() as conn:
            row = conn.execute(
                select(table.c.id, table.c.description).where(
                    table.c.key == secret.key, table.c.scope == secret.scope
                )
            ).first()
            if row is not None:
                if not row.description and secret.description:
                    conn.execute(
                        update(table)
                        .where(table.c.id == row.id)
                        .values(description=secret.description)
                    )
                return False
            conn.execute(
                insert(table).values(
                    key=secret.key,
                    scope=secret.scope,
                    value_type=secret.value_type,
                    required=secret.required,
                    description=secret.description,
                    value_encrypted=None,
                    created_at=now,
                    updated_at=now,
                )
            )
            return True

    def delete_secret(self, key: str, scope: str | None = None) -> int:
        """Delete the secret in `scope` (every scope when None); returns rows removed."""
        query = delete(table).where(table.c.key == key)
        if scope is not None:
            query = query.where(table.c.scope == scope)
        with self._engine.begin() as conn:
            return int(conn.execute(query).rowcount or 0)

    def list_secrets(self) -> list[SecretRecord]:
        with self._engine.connect() as conn:
            rows = conn.execute(select(table).order_by(table.c.key, table.c.scope)).all()
        return [
            SecretRecord(
                key=row.key,
                scope=row.scope,
                value_type=row.value_type,
                required=bool(row.required),
                description=row.description,
                is_set=row.value_encrypted is not None,
                updated_at=row.updated_at,
            )
            for row in rows
        ]

    def scopes_of(self, key: str) -> list[str]:
        with self._engine.connect() as conn:
            return list(conn.execute(select(table.c.scope).where(table.c.key == key)).scalars())

    def is_set(self, key: str, scope: str = DEFAULT_SCOPE) -> bool:
        with self._engine.connect() as conn:
            token = conn.execute(
                select(table.c.value_encrypted).where(table.c.key == key, table.c.scope == scope)
            ).scalar_one_or_none()
        return token is not None
