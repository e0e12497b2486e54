"""Fixtures of the built-in command tests."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from command_helpers import LocalServer, Recorded


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    state = LocalServer()

    class _Handler(BaseHTTPRequestHandler):
        def _serve(self, method: str) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            record = Recorded(method, parts.path, parse_qs(parts.query),
                              {k.lower(): v for k, v in self.headers.items()}, body)
            state.requests.append(record)
            handler = state.routes.get((method, parts.path)) or next(
                (h for (m, p), h in state.routes.items()
                 if m == method and p.endswith("/*") and parts.path.startswith(p[:-1])), None)
            status, payload = handler(record) if handler else (404, {"message": "not found"})
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL nothing listens on (the port was just freed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
