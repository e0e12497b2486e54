"""Bring a database up to the newest schema with the migrations shipped in this package."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic.config import Config

from jarvis.schema_upgrade import upgrade_to_head

MIGRATIONS = Path(__file__).with_name("migrations")

# An arbitrary constant: PostgreSQL advisory lock id, so two centers never migrate at once.
_PG_LOCK_ID = 0x4A415256


def upgrade(engine: sa.Engine) -> None:
    """Run every migration not yet applied (idempotent)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": _PG_LOCK_ID})
        config.attributes["connection"] = connection
        upgrade_to_head(config)
