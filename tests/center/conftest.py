"""Fixtures for the center tests: a database (SQLite file or PostgreSQL schema) and servers.

Every test that takes `db_url` runs twice: on a fresh SQLite file and on PostgreSQL
(127.0.0.1:5432, database `test`), in a schema created for this test session and
dropped afterwards. The PostgreSQL runs fail, never skip, when the server is down.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from center_helpers import Center

from jarvis.center.llm.base import LLMBackend
from jarvis.center.meaning import Relatedness, encoder_folder
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.model_files import ModelMissingError

PG_BASE = os.environ.get(
    "JARVIS_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(scope="session")
def pg_schema_url() -> Iterator[str]:
    """A PostgreSQL URL whose search_path is a schema private to this test session."""
    schema = f"jarvis_center_test_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(PG_BASE)
    try:
        with admin.begin() as connection:
            connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    except sa.exc.OperationalError as exc:
        pytest.fail(f"PostgreSQL at {PG_BASE} is unreachable: {exc}")
    try:
        # application_name lets a test find (and cut) exactly this session's connections.
        yield f"{PG_BASE}?application_name={schema}&options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'center.db'}"
    return request.getfixturevalue("pg_schema_url")


@pytest.fixture
def make_center(db_url: str, tmp_path: Path) -> Iterator[Callable[..., Center]]:
    """`make_center(backend, **settings)` -> a running `Center` on this test's database.

    Centers on the test's database share one node (its key works on each of them).
    """
    started: list[Center] = []

    def make(backend: LLMBackend | None = None, **settings: Any) -> Center:
        settings.setdefault("data_dir", tmp_path)
        settings.setdefault("database_url", db_url)
        settings.setdefault("log_level", "warning")
        server = CenterServer(CenterSettings(**settings), backend).start()
        shared = next((c for c in started if c.server.settings.database_url == db_url), None)
        same_db = settings["database_url"] == db_url and shared is not None
        center = Center(server, (shared.node, shared.key) if same_db and shared else None)
        started.append(center)
        return center

    yield make
    for center in started:
        center.close()


@pytest.fixture(scope="session")
def relatedness() -> Relatedness:
    """The real sentence encoder's relatedness (prepared by `make model`)."""
    try:
        return Relatedness.load(encoder_folder())
    except ModelMissingError as exc:
        if os.environ.get("JARVIS_REQUIRE_MODEL") == "1":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
