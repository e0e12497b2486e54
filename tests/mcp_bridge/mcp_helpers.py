"""What the MCP tests share: the sample server's path, free ports, waiting for a listener."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx

SAMPLE_SERVER = Path(__file__).parent / "sample_server.py"
SRC = Path(__file__).resolve().parents[2] / "src"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    """Return once something answers HTTP on the port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listened on port {port} within {timeout:g} seconds")
