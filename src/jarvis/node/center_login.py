"""The node's credentials for its center: the URL and key `jarvis node login` stored.

Both are kept with the node's secrets (encrypted at rest, scope `node`). The environment
wins over what is stored: `JARVIS_CENTER_URL`, `JARVIS_CENTER_KEY`.
"""

from __future__ import annotations

from dataclasses import dataclass

from jarvis.node.settings import NodeSettings
from jarvis.node.store import NodeStore

__all__ = [
    "CENTER_KEY", "CENTER_URL", "LOCAL_CENTER_KEY", "SCOPE", "CenterLogin", "center_login",
    "local_key", "save_local_key", "save_login",
]

SCOPE = "node"
CENTER_KEY = "JARVIS_CENTER_KEY"
CENTER_URL = "JARVIS_CENTER_URL"
# The key of the center `jarvis ask`/`chat` start in-process: kept apart from a remote one.
LOCAL_CENTER_KEY = "JARVIS_LOCAL_CENTER_KEY"


@dataclass(frozen=True)
class CenterLogin:
    """Where the node's center is and the key it presents (None: not set up)."""

    url: str | None
    key: str | None


def center_login(settings: NodeSettings, store: NodeStore) -> CenterLogin:
    """The settings' center URL and key, else those `jarvis node login` stored."""
    stored = store.exists()
    url = settings.center_url or (store.secrets.get_secret(CENTER_URL, SCOPE) if stored else None)
    key = settings.center_key or (store.secrets.get_secret(CENTER_KEY, SCOPE) if stored else None)
    return CenterLogin(url, key)


def save_login(store: NodeStore, url: str, key: str) -> None:
    """Keep the center's URL and this node's key for the next runs."""
    store.secrets.set_secret(CENTER_URL, url, SCOPE, value_type="url",
                             description="The command center this node logged in to")
    store.secrets.set_secret(CENTER_KEY, key, SCOPE,
                             description="This node's key for its command center")


def local_key(store: NodeStore) -> str | None:
    """The key for the in-process center, if one was made before."""
    return store.secrets.get_secret(LOCAL_CENTER_KEY, SCOPE) if store.exists() else None


def save_local_key(store: NodeStore, key: str) -> None:
    store.secrets.set_secret(LOCAL_CENTER_KEY, key, SCOPE,
                             description="This machine's key for the center jarvis ask starts")
