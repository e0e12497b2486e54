"""The node's own database: encrypted secrets and the storage commands keep state in."""

from jarvis.node.store.command_storage import SqliteCommandStorage
from jarvis.node.store.crypto import SecretKeyError
from jarvis.node.store.node_store import NodeStore
from jarvis.node.store.secret_store import SecretRecord, SqliteSecretStore

__all__ = [
    "NodeStore",
    "SecretKeyError",
    "SecretRecord",
    "SqliteCommandStorage",
    "SqliteSecretStore",
]
