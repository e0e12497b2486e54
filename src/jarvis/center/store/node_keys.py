"""The node and admin credentials tables: digests of keys, never the keys themselves.

These are the cold paths (the CLI, the console, a center starting); the per-request key
lookup is `Store.node_for_key_hash`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa

from jarvis.center.store.reads import aware
from jarvis.center.store.schema import admin_tokens, nodes

__all__ = ["NodeExistsError", "NodeRecord", "NodeTable", "UnknownNodeError"]


class NodeExistsError(ValueError):
    """A node of that name already holds a key."""


class UnknownNodeError(LookupError):
    """No node of that name was ever added."""


@dataclass(frozen=True)
class NodeRecord:
    """What may be shown about a node: everything but its key."""

    name: str
    created_at: datetime
    last_seen_at: datetime | None
    revoked_at: datetime | None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


class NodeTable:
    """Add, list and revoke nodes; keep the admin token's digest."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def add(self, name: str, key_hash: str, replace: bool = False) -> None:
        """Record a node's key digest; `replace` gives an existing node this key instead
        (its conversations stay its own, its old key stops working)."""
        now = datetime.now(UTC)
        with self.engine.begin() as connection:
            found = connection.execute(
                sa.select(nodes.c.revoked_at).where(nodes.c.name == name)
            ).first()
            if found is None:
                connection.execute(nodes.insert().values(name=name, key_hash=key_hash,
                                                         created_at=now))
                return
            if found.revoked_at is None and not replace:
                raise NodeExistsError(
                    f"node '{name}' already has a key: revoke it first, or give it a new key "
                    f"with: jarvis nodes add {name} --replace"
                )
            connection.execute(nodes.update().where(nodes.c.name == name)
                               .values(key_hash=key_hash, revoked_at=None))

    def revoke(self, name: str) -> bool:
        """Revoke the node's key; False when it already was. UnknownNodeError if no such node."""
        with self.engine.begin() as connection:
            found = connection.execute(
                sa.select(nodes.c.revoked_at).where(nodes.c.name == name)
            ).first()
            if found is None:
                raise UnknownNodeError(f"no node named '{name}' (see: jarvis nodes list)")
            if found.revoked_at is not None:
                return False
            connection.execute(nodes.update().where(nodes.c.name == name)
                               .values(revoked_at=datetime.now(UTC)))
        return True

    def list(self) -> list[NodeRecord]:
        """Every node, by name."""
        query = sa.select(nodes.c.name, nodes.c.created_at, nodes.c.last_seen_at,
                          nodes.c.revoked_at).order_by(nodes.c.name)
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [NodeRecord(r.name, aware(r.created_at) or r.created_at, aware(r.last_seen_at),
                           aware(r.revoked_at)) for r in rows]

    def touch(self, name: str, when: datetime) -> None:
        """Remember when the node was last seen."""
        with self.engine.begin() as connection:
            connection.execute(nodes.update().where(nodes.c.name == name)
                               .values(last_seen_at=when))

    def admin_hash(self) -> str | None:
        """The generated admin token's digest, or None when none was generated."""
        with self.engine.connect() as connection:
            return connection.execute(
                sa.select(admin_tokens.c.token_hash).where(admin_tokens.c.id == 1)
            ).scalar()

    def set_admin_hash(self, token_hash: str, replace: bool = False) -> bool:
        """Keep this digest as the admin token's; False when one is kept and not `replace`d
        (another center started first, or the token was generated before)."""
        now = datetime.now(UTC)
        try:
            with self.engine.begin() as connection:
                if replace:
                    connection.execute(admin_tokens.delete())
                connection.execute(admin_tokens.insert().values(id=1, token_hash=token_hash,
                                                                created_at=now))
        except sa.exc.IntegrityError:
            return False
        return True
