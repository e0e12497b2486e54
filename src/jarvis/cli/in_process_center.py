"""The command center the CLI starts for itself when no center URL is configured.

It starts on loopback the first time the node needs it, or earlier, in the background,
where a person is about to talk (`jarvis chat`): the center, and the model it reads as it
starts, are then ready by the time the first line is typed. A start that fails in the
background is quiet; the first request starts it again and reports why it cannot.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

from jarvis.node.center_login import local_key, save_local_key
from jarvis.node.store import NodeStore

__all__ = ["LOCAL_NODE", "CenterStartError", "InProcessCenter"]

# The node the CLI registers with the center it starts itself (no set-up needed).
LOCAL_NODE = "local"


class CenterStartError(RuntimeError):
    """The built-in center cannot start; the message says why and what to do."""


def _embedded_model_problem(center_settings: Any) -> str | None:
    """Why the embedded model cannot be used (with the way to get it), else None."""
    if center_settings.llm_backend != "embedded":
        return None
    try:
        from jarvis.center.llm.model_store import ModelStoreError, resolve_model_path
    except ImportError:
        return None
    try:
        resolve_model_path(center_settings.llm_model, center_settings.resolved_data_dir())
    except ModelStoreError as exc:
        return str(exc)
    return None


class InProcessCenter:
    """A center on loopback for this machine's node, stopped at exit.

    This machine is its node: the key is made on first use and kept with the node's secrets.
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.server: Any = None
        self._lock = threading.Lock()
        self._early: threading.Thread | None = None

    def start_early(self) -> None:
        """Start the center in the background now, before anything needs it."""
        def run() -> None:
            # A failure here is quiet: the first request starts it again and says why.
            with contextlib.suppress(Exception):
                self.url()

        self._early = threading.Thread(target=run, name="center-start", daemon=True)
        self._early.start()

    def url(self) -> str:
        """The center's URL, starting it first if needed (CenterStartError when it cannot)."""
        with self._lock:
            if self.server is None:
                self.server = self._start()
            return str(self.server.url)

    def _start(self) -> Any:
        from jarvis.center.server import CenterServer
        from jarvis.center.settings import load_settings

        overrides: dict[str, Any] = {"data_dir": self.data_dir, "port": 0}
        if not os.environ.get("JARVIS_LOG_LEVEL"):
            overrides["log_level"] = "warning"  # uvicorn's lines would interleave with answers
        try:
            center_settings = load_settings(overrides)
        except ValueError as exc:
            raise CenterStartError(str(exc)) from exc
        problem = _embedded_model_problem(center_settings)
        if problem is not None:
            raise CenterStartError(problem)
        try:
            return CenterServer(settings=center_settings).start()
        except Exception as exc:
            raise CenterStartError(f"cannot start the built-in command center: {exc}") from exc

    def key(self) -> str:
        """This machine's node key, made (again) when the center does not know it."""
        from jarvis.center.auth import NodeKeys

        self.url()
        store = NodeStore(self.data_dir)
        try:
            key = local_key(store)
            if key is None or NodeKeys(self.server.app.state.store).node_for(key) != LOCAL_NODE:
                key = self.server.add_node(LOCAL_NODE, replace=True)
                save_local_key(store, key)
            return key
        finally:
            store.close()

    def stop(self) -> None:
        if self._early is not None:
            self._early.join()
        with self._lock:
            if self.server is not None:
                self.server.stop()
                self.server = None
