"""The SDK's `CommandStorage` (JSON values by namespace and key) in the node database."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, delete, select
from sqlalchemy.dialects.sqlite import insert

from jarvis.node.store.schema import command_storage as table

__all__ = ["SqliteCommandStorage"]


class SqliteCommandStorage:
    """Each write is its own transaction, so a crash never leaves half a value."""

    def __init__(self, engine_factory: Callable[[], Engine]) -> None:
        self._engine_factory = engine_factory

    def get(self, namespace: str, key: str, default: Any = None) -> Any:
        with self._engine_factory().connect() as conn:
            text = conn.execute(
                select(table.c.value).where(table.c.namespace == namespace, table.c.key == key)
            ).scalar_one_or_none()
        return default if text is None else json.loads(text)

    def set(self, namespace: str, key: str, value: Any) -> None:
        try:
            text = json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"storage values must be JSON (namespace {namespace!r}, key {key!r}): {exc}"
            ) from exc
        statement = insert(table).values(
            namespace=namespace, key=key, value=text, updated_at=datetime.now(UTC)
        )
        statement = statement.on_conflict_do_update(
            index_elements=[table.c.namespace, table.c.key],
            set_={"value": statement.excluded.value, "updated_at": statement.excluded.updated_at},
        )
        with self._engine_factory().begin() as conn:
            conn.execute(statement)

    def delete(self, namespace: str, key: str) -> None:
        with self._engine_factory().begin() as conn:
            conn.execute(
                delete(table).where(table.c.namespace == namespace, table.c.key == key)
            )

    def items(self, namespace: str) -> dict[str, Any]:
        with self._engine_factory().connect() as conn:
            rows = conn.execute(
                select(table.c.key, table.c.value)
                .where(table.c.namespace == namespace)
                .order_by(table.c.key)
            ).all()
        return {row.key: json.loads(row.value) for row in rows}

    def namespaces(self) -> list[str]:
        with self._engine_factory().connect() as conn:
            return list(conn.execute(select(table.c.namespace).distinct()).scalars())
