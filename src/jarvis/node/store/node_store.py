"""The node's SQLite database (`<data_dir>/node.db`): secrets and command storage."""

from __future__ import annotations

import threading
from pathlib import Path

from sqlalchemy import Engine

from jarvis.node.store import database
from jarvis.node.store.command_storage import SqliteCommandStorage
from jarvis.node.store.secret_store import SqliteSecretStore

__all__ = ["NodeStore"]


class NodeStore:
    """Opened lazily: nothing is created on disk until the first read or write."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / database.DB_FILE_NAME
        self._engine: Engine | None = None
        self._lock = threading.Lock()
        self.secrets = SqliteSecretStore(self.engine, self.data_dir)
        self.storage = SqliteCommandStorage(self.engine)

    def exists(self) -> bool:
        return self.path.exists()

    def engine(self) -> Engine:
        """The engine, with the schema migrated to the newest revision on first use."""
        if self._engine is None:
            with self._lock:
                if self._engine is None:
                    self.data_dir.mkdir(parents=True, exist_ok=True)
                    engine = database.open_engine(self.path)
                    database.upgrade(engine)
                    self._engine = engine
        return self._engine

    def migrate(self) -> bool:
        """Apply pending migrations now; True when any were applied."""
        if self._engine is None:
            with self._lock:
                self.data_dir.mkdir(parents=True, exist_ok=True)
                engine = database.open_engine(self.path)
                applied = database.upgrade(engine)
                self._engine = engine
                return applied
        return database.upgrade(self._engine)

    def pending_migrations(self) -> bool:
        """Whether opening the store would change its schema (read-only check)."""
        if not self.exists():
            return True
        engine = database.open_engine(self.path)
        try:
            return database.current_revision(engine) != database.head_revision()
        finally:
            engine.dispose()

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
