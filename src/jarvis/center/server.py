"""Run the center in a background thread on a loopback port (for the CLI, tests and benches)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import TracebackType

import uvicorn
from fastapi import FastAPI

from jarvis.center.app import create_app
from jarvis.center.auth import NodeKeys, check_no_auth_bind
from jarvis.center.llm.base import LLMBackend
from jarvis.center.settings import CenterSettings, load_settings

__all__ = ["CenterServer", "serve_app_in_thread"]


class _ThreadServer:
    """A uvicorn server run in a daemon thread; port 0 picks a free port."""

    def __init__(self, app: FastAPI, host: str, port: int, log_level: str = "warning",
                 tls: tuple[Path, Path] | None = None) -> None:
        self.host = host
        self.port = port
        certfile, keyfile = (str(tls[0]), str(tls[1])) if tls else (None, None)
        config = uvicorn.Config(
            app, host=host, port=port, log_level=log_level, lifespan="on", access_log=False,
            ssl_certfile=certfile, ssl_keyfile=keyfile,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="center", daemon=True)

    def start(self, timeout: float = 20.0) -> None:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"the server could not start on {self.host}:{self.port}")
            if time.monotonic() > deadline:
                raise TimeoutError("the server did not start in time")
            time.sleep(0.01)
        # uvicorn bound the socket itself (it sets TCP_NODELAY on connections that way).
        self.port = self._server.servers[0].sockets[0].getsockname()[1]

    def stop(self, timeout: float = 20.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)


def serve_app_in_thread(app: FastAPI, host: str = "127.0.0.1", port: int = 0) -> _ThreadServer:
    """Serve any ASGI app like the center is served (the benchmark's baseline uses it)."""
    server = _ThreadServer(app, host, port)
    server.start()
    return server


class CenterServer:
    """The center on `host:port` (port 0: a free port) in a background thread.

    Use as a context manager, or call `start()` and `stop()`. `url` is the base URL
    (https when the settings name a certificate and its key).
    Without `settings` they are loaded from the environment and config file; tests
    should pass `CenterSettings(data_dir=...)` or a `database_url`. Nodes need a key:
    `add_node(name)` creates one in the center's store.
    """

    def __init__(
        self,
        settings: CenterSettings | None = None,
        backend: LLMBackend | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.settings = settings or load_settings()
        self.backend = backend
        self.host = host
        self.port = port
        self.app: FastAPI | None = None
        self._server: _ThreadServer | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the center server is not running")
        host = f"[{self.host}]" if ":" in self.host else self.host
        scheme = "https" if self.settings.tls else "http"
        return f"{scheme}://{host}:{self._server.port}"

    def start(self) -> CenterServer:
        if self._server is not None:
            return self
        check_no_auth_bind(self.settings.insecure_no_auth, self.host)
        self.app = create_app(self.settings, self.backend)
        cert, key = self.settings.ssl_certfile, self.settings.ssl_keyfile
        tls = (cert, key) if cert is not None and key is not None else None
        server = _ThreadServer(self.app, self.host, self.port, self.settings.log_level.lower(),
                               tls)
        server.start()
        self._server = server
        return self

    def add_node(self, name: str, replace: bool = False) -> str:
        """A key for node `name` (like `jarvis nodes add`); `replace`: a new key for a node
        that has one."""
        if self.app is None:
            raise RuntimeError("start the center before adding nodes")
        return NodeKeys(self.app.state.store).add(name, replace=replace)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> CenterServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
