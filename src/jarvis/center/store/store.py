"""Durable conversations: one short read and one write transaction per request.

Every request reads the conversation row (its `version` and `message_count`), then writes
the new messages, the conversation's new state and the turn's trace in a single
transaction guarded by the version, so a second center process on the same database (or
a restarted one) always continues from what was last committed. Message history is
cached per conversation and topped up from the database when another process wrote more.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool, StaticPool

from jarvis.center.store import migrate
from jarvis.center.store.schema import conversations, messages, nodes, turns

__all__ = [
    "ConcurrentUpdateError", "ConversationOwnedError", "ConversationRecord", "Store", "TurnWrite",
]

log = logging.getLogger(__name__)

_T = TypeVar("_T")
_CACHE_SIZE = 512
# Rows per retention transaction; ids per IN (...), under every driver's parameter limit.
_DELETE_CHUNK = 500

# The hot statements, built once and compiled once per dialect, then run on the pooled
# DBAPI connection directly: SQLAlchemy's per-execution machinery would cost more than
# the statements themselves.
_LOAD = sa.select(
    conversations.c.node_context,
    conversations.c.client_tools,
    conversations.c.available_commands,
    conversations.c.pending,
    conversations.c.voice_command,
    conversations.c.message_count,
    conversations.c.version,
    conversations.c.owner,
).where(conversations.c.id == sa.bindparam("b_id"))
# A node key's digest -> the node (the hot path's authentication, one indexed read).
_NODE_BY_KEY = sa.select(nodes.c.name, nodes.c.key_hash, nodes.c.revoked_at).where(
    nodes.c.key_hash == sa.bindparam("b_hash")
)
_HISTORY = (
    sa.select(messages.c.body)
    .where(
        messages.c.conversation_id == sa.bindparam("b_id"),
        messages.c.seq >= sa.bindparam("b_from"),
        messages.c.seq < sa.bindparam("b_to"),
    )
    .order_by(messages.c.seq)
)
_UPDATE = (
    conversations.update()
    .where(
        conversations.c.id == sa.bindparam("b_id"),
        conversations.c.version == sa.bindparam("b_version"),
    )
    .values(
        pending=sa.bindparam("b_pending"),
        message_count=sa.bindparam("b_count"),
        version=sa.bindparam("b_new_version"),
        updated_at=sa.bindparam("b_now"),
        voice_command=sa.bindparam("b_voice"),
        node_context=sa.bindparam("b_node"),
    )
)
_INSERT_MESSAGE = messages.insert().values(
    conversation_id=sa.bindparam("b_id"),
    seq=sa.bindparam("b_seq"),
    role=sa.bindparam("b_role"),
    body=sa.bindparam("b_body"),
    created_at=sa.bindparam("b_now"),
)
_INSERT_TURN = turns.insert().values(
    conversation_id=sa.bindparam("b_id"),
    endpoint=sa.bindparam("b_endpoint"),
    stop_reason=sa.bindparam("b_stop"),
    duration_ms=sa.bindparam("b_ms"),
    trace=sa.bindparam("b_trace"),
    created_at=sa.bindparam("b_now"),
)


class _Sql:
    """A statement compiled for one dialect, with its parameters in the driver's style."""

    def __init__(self, statement: sa.ClauseElement, dialect: sa.Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        self.text = compiled.string
        self.order = list(compiled.positiontup or []) if compiled.positional else None

    def params(self, values: dict[str, Any]) -> Any:
        return tuple(values[n] for n in self.order) if self.order is not None else values


class ConcurrentUpdateError(RuntimeError):
    """Another request changed the conversation between this request's read and write."""


class ConversationOwnedError(LookupError):
    """The conversation id belongs to another node."""


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass
class ConversationRecord:
    """A conversation's state as last committed."""

    id: str
    node_context: dict[str, Any]
    client_tools: list[dict[str, Any]]
    available_commands: list[dict[str, Any]] | None
    pending: dict[str, Any] | None
    voice_command: str
    message_count: int
    version: int
    # The node that started it; None when it was started with authentication off.
    owner: str | None = None
    # Raw JSON of the tool definitions: a cheap cache key for the parsed type maps.
    tools_key: str = ""
    node_context_json: str = ""


@dataclass
class TurnWrite:
    """Everything one request changes, written in one transaction."""

    endpoint: str
    new_messages: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[str, Any] | None = None
    voice_command: str | None = None
    node_context: dict[str, Any] | None = None
    stop_reason: str | None = None
    duration_ms: float = 0.0
    trace: dict[str, Any] = field(default_factory=dict)
    # False when the request failed and the conversation itself must stay as it was.
    update_conversation: bool = True


def _is_memory(url: str) -> bool:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return False
    return (parsed.database or "") in ("", ":memory:") or "mode=memory" in url


def _engine(url: str, durable: bool) -> sa.Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        connect_args: dict[str, Any] = {}
        if parsed.get_driver_name() == "psycopg":
            # No automatic server-side prepared statements: psycopg records one as prepared
            # when its PREPARE is queued in a pipeline, and if an earlier statement of that
            # pipeline fails the server skips the PREPARE, so every later use of the name
            # fails ("prepared statement _pg3_5 does not exist") until the connection closes.
            connect_args["prepare_threshold"] = None
        # Room for every worker thread of the app at once.
        engine = sa.create_engine(
            url, pool_pre_ping=True, pool_size=16, max_overflow=24, connect_args=connect_args
        )
        if parsed.get_backend_name() == "postgresql" and not durable:

            @sa.event.listens_for(engine, "connect")
            def _no_flush_wait(dbapi_connection: Any, _record: Any) -> None:
                # Like SQLite's synchronous=NORMAL: a commit does not wait for the disk flush.
                # A crash of the database server may lose the last instants, never corrupt.
                cursor = dbapi_connection.cursor()
                cursor.execute("SET synchronous_commit TO off")
                cursor.close()
                dbapi_connection.commit()

        return engine
    memory = _is_memory(url)
    kwargs: dict[str, Any] = {"connect_args": {"check_same_thread": False, "timeout": 30}}
    # A file database: the hot path keeps one connection per thread (see Store._raw), so
    # the pool only serves the rare paths. Memory: one shared connection, used in turns.
    kwargs["poolclass"] = StaticPool if memory else NullPool
    engine = sa.create_engine(url, **kwargs)

    @sa.event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        if not memory:
            # WAL: readers never block the writer; NORMAL: no fsync per commit, still crash-safe.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    return engine


class Store:
    """The conversation store behind the engine."""

    def __init__(
        self, url: str, run_migrations: bool = True, durable_commits: bool = False
    ) -> None:
        """`durable_commits`: wait for the disk flush on every commit (slower; survives a
        power loss, not only a crash of the center)."""
        self.url = url
        self.engine = _engine(url, durable_commits)
        if run_migrations:
            migrate.upgrade(self.engine)
        self._history: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        self._decoded: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        dialect = self.engine.dialect
        self._load_sql = _Sql(_LOAD, dialect)
        self._history_sql = _Sql(_HISTORY, dialect)
        self._update_sql = _Sql(_UPDATE, dialect)
        self._message_sql = _Sql(_INSERT_MESSAGE, dialect)
        self._turn_sql = _Sql(_INSERT_TURN, dialect)
        self._node_sql = _Sql(_NODE_BY_KEY, dialect)
        # SQLite stores DateTime as text; other drivers take datetime objects.
        self._text_times = dialect.name == "sqlite"
        # One in-memory SQLite connection is shared by every thread: take turns.
        self._serial = threading.Lock() if _is_memory(url) else None
        # SQLite files and PostgreSQL: one long-lived connection per worker thread.
        self._per_thread = self._serial is None and dialect.name in ("sqlite", "postgresql")
        self._autocommit = dialect.name == "postgresql"
        dbapi = dialect.loaded_dbapi
        self._disconnect_errors: tuple[type[BaseException], ...] = (
            (dbapi.OperationalError, dbapi.InterfaceError) if self._autocommit else ()
        )
        self._integrity_errors: tuple[type[BaseException], ...] = (dbapi.IntegrityError,)
        self._database_errors: tuple[type[BaseException], ...] = (dbapi.Error,)
        self._local = threading.local()
        self._thread_connections: list[Any] = []

    def _timestamp(self, value: datetime) -> Any:
        if self._text_times:
            return value.replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")
        return value

    @contextmanager
    def _raw(self, write: bool = False) -> Iterator[Any]:
        """A DBAPI connection for one unit of work, committed at the end when `write`.

        SQLite files and PostgreSQL keep one connection per worker thread (no pool round
        trips; PostgreSQL in autocommit with an explicit transaction for writes). Other
        databases borrow a pooled connection. Errors roll back; a broken connection is
        dropped so the next use reconnects.
        """
        if not self._per_thread:
            with self._serial or nullcontext():
                connection = self.engine.raw_connection()
                try:
                    yield connection
                    if write:
                        connection.commit()
                except BaseException:
                    connection.rollback()
                    raise
                finally:
                    connection.close()
            return
        connection = self._thread_connection()
        explicit = self._autocommit and write
        try:
            if explicit:
                connection.cursor().execute("BEGIN")
            yield connection
            if explicit:
                connection.cursor().execute("COMMIT")
            elif write:
                connection.commit()
        except BaseException as exc:
            broken = isinstance(exc, self._disconnect_errors)
            if broken or not self._rolled_back(connection, explicit):
                self._drop_thread_connection(connection)
            raise

    @staticmethod
    def _rolled_back(connection: Any, explicit: bool) -> bool:
        """Roll back the failed unit of work; False when the connection could not."""
        try:
            if explicit:
                connection.cursor().execute("ROLLBACK")
            else:
                connection.rollback()
        except Exception as exc:
            log.warning("database rollback failed (%s); reconnecting", type(exc).__name__)
            return False
        return True

    def _write_pipelined(
        self, pg: Any, update: Any, rows: list[Any], turn: Any, conflict: str
    ) -> None:
        """PostgreSQL: send the whole transaction in one round trip, then commit.

        Errors roll back in `_raw`. A unique violation means another request took our
        message numbers first: a conflict, whichever statement psycopg raised it from.
        """
        version_check = pg.cursor()
        cursor = pg.cursor()
        with pg.pipeline() as pipeline:
            try:
                cursor.execute("BEGIN")
                if update is not None:
                    version_check.execute(self._update_sql.text, update)
                if rows:
                    cursor.executemany(self._message_sql.text, rows)
                cursor.execute(self._turn_sql.text, turn)
                pipeline.sync()
            except self._database_errors as exc:
                # Collect what the server skipped after the error, so the pipeline ends clean.
                with suppress(Exception):
                    pipeline.sync()
                if isinstance(exc, self._integrity_errors):
                    raise ConcurrentUpdateError(conflict) from exc
                raise
            if update is not None and version_check.rowcount != 1:
                raise ConcurrentUpdateError(conflict)
            cursor.execute("COMMIT")  # sent as the pipeline closes

    def _thread_connection(self) -> Any:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self.engine.raw_connection()
            if self._autocommit:
                connection.dbapi_connection.autocommit = True
            self._local.connection = connection
            with self._lock:
                self._thread_connections.append(connection)
        return connection

    def _drop_thread_connection(self, connection: Any) -> None:
        self._local.connection = None
        with self._lock:
            if connection in self._thread_connections:
                self._thread_connections.remove(connection)
        with suppress(Exception):
            connection.invalidate()

    def _retrying(self, work: Callable[[], _T]) -> _T:
        """Run `work`, once more on a fresh connection if the database connection broke.

        Safe for writes too: if a broken commit did go through, the repeated one fails its
        version check instead of writing twice.
        """
        try:
            return work()
        except self._disconnect_errors:
            log.warning("database connection lost; reconnecting")
            return work()

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        with self._lock:
            connections, self._thread_connections = self._thread_connections, []
        for connection in connections:
            connection.close()
        self.engine.dispose()

    # --- reads ------------------------------------------------------------------------
    def _fetch_one(self, sql: _Sql, values: dict[str, Any]) -> Any:
        """The first row of one hot-path query (or None), on the thread's connection."""

        def read() -> Any:
            with self._raw() as connection:
                cursor = connection.cursor()
                cursor.execute(sql.text, sql.params(values))
                found = cursor.fetchone()
                cursor.close()
                return found

        return self._retrying(read)

    def load(self, conversation_id: str) -> ConversationRecord | None:
        """The conversation row, or None when it was never started."""
        row = self._fetch_one(self._load_sql, {"b_id": conversation_id})
        if row is None:
            return None
        node, tools, commands, pending, voice, count, version, owner = row
        return ConversationRecord(
            id=conversation_id,
            node_context=json.loads(node),
            node_context_json=node,
            client_tools=self._tools(tools),
            available_commands=self._tools(commands) if commands else None,
            pending=json.loads(pending) if pending else None,
            voice_command=voice,
            message_count=count,
            version=version,
            owner=owner,
            tools_key=tools + "\x00" + (commands or ""),
        )

    def node_for_key_hash(self, key_hash: str) -> tuple[str, str, bool] | None:
        """(name, stored digest, revoked) of the node whose key has this digest, or None."""
        row = self._fetch_one(self._node_sql, {"b_hash": key_hash})
        return None if row is None else (row[0], row[1], row[2] is not None)

    def _tools(self, text: str) -> Any:
        """Tool definitions rarely change: decode each distinct text once."""
        with self._lock:
            found = self._decoded.get(text)
            if found is not None:
                self._decoded.move_to_end(text)
                return found
        value = json.loads(text)
        with self._lock:
            self._decoded[text] = value
            while len(self._decoded) > _CACHE_SIZE:
                self._decoded.popitem(last=False)
        return value

    def history(self, record: ConversationRecord) -> list[dict[str, Any]]:
        """Every message of the conversation as of `record` (a copy of the cached list)."""
        with self._lock:
            cached = self._history.get(record.id)
            if cached is not None:
                self._history.move_to_end(record.id)
            have = list(cached) if cached is not None else []
        if len(have) > record.message_count:
            have = []  # the cache is ahead of this record (should not happen): read it all
        if len(have) < record.message_count:
            sql = self._history_sql
            params = {"b_id": record.id, "b_from": len(have), "b_to": record.message_count}

            def read() -> list[Any]:
                with self._raw() as connection:
                    cursor = connection.cursor()
                    cursor.execute(sql.text, sql.params(params))
                    found = cursor.fetchall()
                    cursor.close()
                    return list(found)

            rows = self._retrying(read)
            have.extend(json.loads(r[0]) for r in rows)
            self._remember(record.id, have)
        return list(have)

    def _remember(self, conversation_id: str, history: list[dict[str, Any]]) -> None:
        with self._lock:
            self._history[conversation_id] = list(history)
            self._history.move_to_end(conversation_id)
            while len(self._history) > _CACHE_SIZE:
                self._history.popitem(last=False)

    def turns(self, conversation_id: str) -> list[dict[str, Any]]:
        """The per-turn traces of a conversation, oldest first."""
        with self.engine.connect() as connection:
            query = sa.select(turns).where(turns.c.conversation_id == conversation_id)
            rows = connection.execute(query.order_by(turns.c.id)).all()
        return [
            {
                "endpoint": r.endpoint,
                "stop_reason": r.stop_reason,
                "duration_ms": r.duration_ms,
                "trace": json.loads(r.trace),
                "created_at": r.created_at,
            }
            for r in rows
        ]

    # --- writes -----------------------------------------------------------------------
    def delete_older_than(self, cutoff: datetime) -> int:
        """Delete the conversations last changed before `cutoff` (their messages and traces
        too) and any trace written before it; returns how many conversations went.

        Short transactions of at most `_DELETE_CHUNK` rows each, so that requests are never
        held up long by a first sweep through a large backlog.
        """
        deleted = 0
        while True:
            gone = self._delete_conversations(cutoff)
            deleted += len(gone)
            if len(gone) < _DELETE_CHUNK:
                break
        old_turns = sa.select(turns.c.id).where(turns.c.created_at < cutoff).limit(_DELETE_CHUNK)
        while True:
            with self.engine.begin() as connection:
                count = connection.execute(turns.delete().where(turns.c.id.in_(old_turns)))
            if count.rowcount < _DELETE_CHUNK:
                return deleted

    def _delete_conversations(self, cutoff: datetime) -> list[str]:
        """One batch of old conversations with their messages and traces; their ids."""
        old = (sa.select(conversations.c.id).where(conversations.c.updated_at < cutoff)
               .limit(_DELETE_CHUNK))
        with self.engine.begin() as connection:
            # Deleting the row first locks it: a request racing on it gets 409, then 404.
            gone = [row[0] for row in connection.execute(
                conversations.delete()
                .where(conversations.c.id.in_(old), conversations.c.updated_at < cutoff)
                .returning(conversations.c.id)
            )]
            if gone:
                connection.execute(messages.delete().where(messages.c.conversation_id.in_(gone)))
                connection.execute(turns.delete().where(turns.c.conversation_id.in_(gone)))
        with self._lock:
            for conversation_id in gone:
                self._history.pop(conversation_id, None)
        return gone

    def start(
        self,
        conversation_id: str,
        node_context: dict[str, Any],
        client_tools: list[dict[str, Any]],
        available_commands: list[dict[str, Any]] | None,
        owner: str | None = None,
    ) -> bool:
        """Create the conversation, or replace its tools and keep its history; True if new.

        With an `owner`, a conversation that exists must be that node's
        (ConversationOwnedError otherwise); a new one is recorded as its.
        """
        now = datetime.now(UTC)
        values = {
            "node_context": _dumps(node_context),
            "client_tools": _dumps(client_tools),
            "available_commands": (
                _dumps(available_commands) if available_commands is not None else None
            ),
            "updated_at": now,
        }
        for _attempt in range(3):
            try:
                with self.engine.begin() as connection:
                    mine = [] if owner is None else [conversations.c.owner == owner]
                    updated = connection.execute(
                        conversations.update()
                        .where(conversations.c.id == conversation_id, *mine)
                        .values(version=conversations.c.version + 1, **values)
                    ).rowcount
                    if updated:
                        return False
                    if owner is not None and self._exists(connection, conversation_id):
                        raise ConversationOwnedError(conversation_id)
                    connection.execute(
                        conversations.insert().values(
                            id=conversation_id,
                            pending=None,
                            voice_command="",
                            message_count=0,
                            version=0,
                            created_at=now,
                            owner=owner,
                            **values,
                        )
                    )
                    return True
            except sa.exc.IntegrityError:
                continue  # another process created it at the same moment: update it instead
        raise ConcurrentUpdateError(f"conversation {conversation_id} could not be started")

    @staticmethod
    def _exists(connection: sa.Connection, conversation_id: str) -> bool:
        query = sa.select(conversations.c.id).where(conversations.c.id == conversation_id)
        return connection.execute(query).first() is not None

    def commit(self, record: ConversationRecord, write: TurnWrite) -> ConversationRecord:
        """Write one request's changes atomically; returns the record as it now is."""
        now = datetime.now(UTC)
        count = record.message_count
        node_json = (
            _dumps(write.node_context) if write.node_context is not None
            else record.node_context_json
        )
        voice = write.voice_command if write.voice_command is not None else record.voice_command
        stamp = self._timestamp(now)
        update = None
        rows: list[Any] = []
        if write.update_conversation:
            update = self._update_params(record, write, stamp, voice, node_json)
            rows = self._message_params(record, write.new_messages, stamp)
        turn = self._turn_params(record, write, stamp)
        conflict = f"conversation {record.id} was changed by another request"
        self._retrying(lambda: self._write_turn(update, rows, turn, conflict))
        if not write.update_conversation:
            return record
        new = ConversationRecord(
            id=record.id,
            node_context=write.node_context or record.node_context,
            client_tools=record.client_tools,
            available_commands=record.available_commands,
            pending=write.pending,
            voice_command=voice,
            message_count=count + len(write.new_messages),
            version=record.version + 1,
            owner=record.owner,
            tools_key=record.tools_key,
            node_context_json=node_json,
        )
        self._extend_cache(record, write.new_messages)
        return new

    def _update_params(
        self, record: ConversationRecord, write: TurnWrite, stamp: Any, voice: str, node_json: str
    ) -> Any:
        """The conversation row's version-guarded update, as the driver's parameters."""
        return self._update_sql.params(
            {
                "b_id": record.id,
                "b_version": record.version,
                "b_pending": _dumps(write.pending) if write.pending is not None else None,
                "b_count": record.message_count + len(write.new_messages),
                "b_new_version": record.version + 1,
                "b_now": stamp,
                "b_voice": voice,
                "b_node": node_json,
            }
        )

    def _message_params(
        self, record: ConversationRecord, new_messages: list[dict[str, Any]], stamp: Any
    ) -> list[Any]:
        """One message row per new message, numbered on from the record's count."""
        return [
            self._message_sql.params(
                {
                    "b_id": record.id,
                    "b_seq": record.message_count + i,
                    "b_role": str(m.get("role", "")),
                    "b_body": _dumps(m),
                    "b_now": stamp,
                }
            )
            for i, m in enumerate(new_messages)
        ]

    def _turn_params(self, record: ConversationRecord, write: TurnWrite, stamp: Any) -> Any:
        """The turn's trace row, as the driver's parameters."""
        return self._turn_sql.params(
            {
                "b_id": record.id,
                "b_endpoint": write.endpoint,
                "b_stop": write.stop_reason,
                "b_ms": write.duration_ms,
                "b_trace": _dumps(write.trace),
                "b_now": stamp,
            }
        )

    def _write_turn(self, update: Any, rows: list[Any], turn: Any, conflict: str) -> None:
        """One transaction: the guarded update (if any), the new messages and the turn."""
        if self._autocommit:
            with self._raw() as connection:
                self._write_pipelined(connection.dbapi_connection, update, rows, turn, conflict)
            return
        with self._raw(write=True) as connection:
            cursor = connection.cursor()
            if update is not None:
                cursor.execute(self._update_sql.text, update)
                if cursor.rowcount != 1:
                    raise ConcurrentUpdateError(conflict)
            if rows:
                cursor.executemany(self._message_sql.text, rows)
            cursor.execute(self._turn_sql.text, turn)
            cursor.close()

    def _extend_cache(self, record: ConversationRecord, new_messages: list[dict[str, Any]]) -> None:
        with self._lock:
            cached = self._history.get(record.id)
            if cached is not None and len(cached) == record.message_count:
                cached.extend(new_messages)
                self._history.move_to_end(record.id)
            elif cached is not None:
                del self._history[record.id]
