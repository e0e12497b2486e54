"""The node's and the center's databases brought up to date at once in one process.

`jarvis chat` starts its center in the background while the node opens its own store, so
both schema upgrades run together: neither may fail because the other is running.
"""

from __future__ import annotations

import threading
from pathlib import Path

import sqlalchemy as sa

from jarvis.center.store import migrate as center_migrate
from jarvis.node.store import database as node_database


def test_node_and_center_upgrades_run_side_by_side(tmp_path: Path) -> None:
    rounds, failures = 6, []
    start = threading.Barrier(2 * rounds)

    def upgrade(kind: str, index: int) -> None:
        path = tmp_path / f"{kind}-{index}.db"
        engine = (node_database.open_engine(path) if kind == "node"
                  else sa.create_engine(f"sqlite:///{path}"))
        start.wait()
        try:
            if kind == "node":
                node_database.upgrade(engine)
            else:
                center_migrate.upgrade(engine)
        except Exception as exc:  # the thread's failure is the test's
            failures.append(f"{kind} {index}: {exc!r}")
        finally:
            engine.dispose()

    threads = [threading.Thread(target=upgrade, args=(kind, index))
               for index in range(rounds) for kind in ("node", "center")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    node_head = node_database.head_revision()
    for index in range(rounds):
        assert node_database.current_revision(
            node_database.open_engine(tmp_path / f"node-{index}.db")) == node_head
        with sa.create_engine(f"sqlite:///{tmp_path / f'center-{index}.db'}").connect() as conn:
            tables = set(sa.inspect(conn).get_table_names())
        assert {"center_alembic_version", "center_conversations", "center_turns"} <= tables
