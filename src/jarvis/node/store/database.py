"""Opening the node database and bringing its schema up to date with Alembic."""

from __future__ import annotations

from pathlib import Path

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event

from jarvis.schema_upgrade import upgrade_to_head

__all__ = ["DB_FILE_NAME", "current_revision", "head_revision", "open_engine", "upgrade"]

DB_FILE_NAME = "node.db"
_MIGRATIONS = Path(__file__).with_name("migrations")


def _alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    return config


def open_engine(path: Path) -> Engine:
    """A SQLite engine usable from several threads (the chat loop and the scheduler)."""
    engine = create_engine(
        f"sqlite:///{path}", connect_args={"timeout": 30, "check_same_thread": False}
    )

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        # WAL + NORMAL: a commit needs no fsync (a fast path write costs well under a
        # millisecond) and survives a crash of the process; readers never block the writer.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    return engine


def head_revision() -> str | None:
    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine) -> bool:
    """Apply pending migrations; True when something was applied."""
    if current_revision(engine) == head_revision():
        return False
    config = _alembic_config()
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        upgrade_to_head(config)
    return True
