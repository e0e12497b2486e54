"""Many nodes at once: concurrent clients running turns against a real center.

Each client is a node of its own (its own `node_id`, conversation and keep-alive
connection). A turn is `POST /voice/command` (-> tool_calls) then
`POST /voice/command/continue` with the tool's result (-> complete, spoken directly from
the result). The LLM is a fast fake: an OpenAI-compatible HTTP server written below,
answering every chat completion at once with the same tool call, so what is measured is
the center's own overhead under concurrency (HTTP, validation, the openai backend's
round trip, the database write), and no request may fail. The center, the fake LLM
and the clients each run in their own process on loopback.

    python bench/load.py [--clients 20] [--turns 1000] [--postgres | --database-url URL]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
CITY = "Miami"
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "open_weather_command",
        "description": "Gets the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
    },
}
RESULT = {"success": True, "message": f"It's 73 degrees and sunny in {CITY}.",
          "context": {"temperature_f": 73, "condition": "sunny"}}


# --- the fake LLM ---------------------------------------------------------------------
def _completion() -> bytes:
    call = {"id": "call_1", "type": "function",
            "function": {"name": "open_weather_command", "arguments": json.dumps({"city": CITY})}}
    return json.dumps({
        "id": "chatcmpl-load", "object": "chat.completion", "model": "fake",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }).encode()


class _FakeLLM(BaseHTTPRequestHandler):
    """`POST /v1/chat/completions`: the same tool call, at once, on a keep-alive connection."""

    protocol_version = "HTTP/1.1"
    body = _completion()

    def log_message(self, *_args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)


def _serve_llm(port: int) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", port), _FakeLLM)
    server.daemon_threads = True
    server.serve_forever()


# --- the center -----------------------------------------------------------------------
def _serve_center(port: int, llm_port: int, database_url: str | None, data_dir: str) -> None:
    from jarvis.center.server import CenterServer
    from jarvis.center.settings import CenterSettings

    settings = CenterSettings(
        data_dir=Path(data_dir), database_url=database_url, log_level="warning", port=port,
        llm_backend="openai", llm_base_url=f"http://127.0.0.1:{llm_port}/v1", llm_timeout=30,
        # Far above what the bench sends, so the limiter is counted but never refuses.
        rate_limit_per_minute=1_000_000, rate_limit_burst=10_000,
    )
    with CenterServer(settings, port=port):
        while True:
            time.sleep(3600)


# --- processes ------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spawn(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, __file__, *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise TimeoutError(f"{url} did not start")


@contextmanager
def _postgres_schema(base: str) -> Iterator[str]:
    """A schema of its own in `base`, dropped afterwards: the bench leaves nothing behind."""
    import sqlalchemy as sa

    schema = f"jarvis_load_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(base)
    with admin.begin() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{base}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def add_nodes(database_url: str | None, data_dir: str, names: list[str]) -> list[str]:
    """A key for each node, made in the center's database as `jarvis nodes add` does."""
    from jarvis.center.auth import NodeKeys
    from jarvis.center.settings import CenterSettings
    from jarvis.center.store import Store

    url = CenterSettings(data_dir=Path(data_dir), database_url=database_url)
    keys = NodeKeys(Store(url.resolved_database_url()))
    try:
        return [keys.add(name) for name in names]
    finally:
        keys.store.close()


@contextmanager
def _servers(database_url: str | None, clients: int) -> Iterator[tuple[str, list[str]]]:
    """The fake LLM and a center using it; yields the center's base URL and node keys."""
    llm_port, center_port = _free_port(), _free_port()
    data_dir = tempfile.mkdtemp(prefix="jarvis-load-")
    keys = add_nodes(database_url, data_dir, [_node_id(i) for i in range(clients)])
    llm = _spawn(["--serve-llm", "--port", str(llm_port)])
    extra = ["--database-url", database_url] if database_url else []
    center = _spawn(["--serve-center", "--port", str(center_port), "--llm-port", str(llm_port),
                     "--data-dir", data_dir, *extra])
    try:
        _wait(f"http://127.0.0.1:{llm_port}/", llm)
        _wait(f"http://127.0.0.1:{center_port}/health", center)
        yield f"http://127.0.0.1:{center_port}", keys
    finally:
        for process in (center, llm):
            process.terminate()
            process.wait(10)


# --- the nodes ------------------------------------------------------------------------
def _node_id(index: int) -> str:
    return f"load-node-{index}"


class _Node:
    """One node: its own id, conversation and keep-alive connection to the center."""

    def __init__(self, base_url: str, index: int, run_id: str, key: str) -> None:
        # Without TCP_NODELAY, Nagle's algorithm and delayed ACKs add ~40 ms per request.
        nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        self.client = httpx.Client(base_url=base_url, timeout=60,
                                   headers={"Authorization": f"Bearer {key}"},
                                   transport=httpx.HTTPTransport(socket_options=nodelay))
        self.node_id = _node_id(index)
        self.conversation_id = f"load-{run_id}-{index}"

    def _post(self, path: str, body: dict[str, Any], stop_reason: str | None) -> dict[str, Any]:
        response = self.client.post(path, json={"conversation_id": self.conversation_id, **body})
        if response.status_code != 200:
            raise RuntimeError(f"{path}: HTTP {response.status_code}: {response.text[:200]}")
        answer: dict[str, Any] = response.json()
        if stop_reason is not None and answer.get("stop_reason") != stop_reason:
            raise RuntimeError(f"{path}: expected {stop_reason}, got {response.text[:200]}")
        return answer

    def start(self) -> None:
        node = {"timezone": "America/New_York", "node_id": self.node_id, "room": "kitchen"}
        self._post("/api/v0/conversation/start",
                   {"node_context": node, "client_tools": [WEATHER_TOOL]}, None)

    def turn(self) -> list[float]:
        """One turn; the seconds each of its two requests took."""
        t0 = time.perf_counter()
        asked = self._post("/api/v0/voice/command",
                           {"voice_command": f"What's the weather in {CITY}?"}, "tool_calls")
        t1 = time.perf_counter()
        results = [{"tool_call_id": asked["tool_calls"][0]["id"], "output": RESULT}]
        self._post("/api/v0/voice/command/continue", {"tool_results": results}, "complete")
        return [t1 - t0, time.perf_counter() - t1]


class _Tally:
    """Turns left to hand out, and what the clients measured."""

    def __init__(self, turns: int) -> None:
        self.left = turns
        self.requests: list[float] = []
        self.turns: list[float] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            self.left -= 1
            return self.left >= 0

    def record(self, timings: list[float] | None, error: str | None) -> None:
        with self._lock:
            if timings is not None:
                self.requests.extend(timings)
                self.turns.append(sum(timings))
            if error is not None:
                self.errors.append(error)


def _drive(node: _Node, tally: _Tally, go: threading.Barrier) -> None:
    go.wait()
    while tally.take():
        try:
            tally.record(node.turn(), None)
        except (httpx.HTTPError, RuntimeError, KeyError, ValueError) as exc:
            tally.record(None, f"{node.node_id}: {type(exc).__name__}: {exc}")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def run(clients: int, turns: int, database_url: str | None) -> dict[str, Any]:
    run_id = os.urandom(4).hex()
    with _servers(database_url, clients) as (base_url, keys):
        nodes = [_Node(base_url, i, run_id, key) for i, key in enumerate(keys)]
        for node in nodes:
            node.start()
            node.turn()  # warm-up: connections, caches, lazy imports
        tally = _Tally(turns)
        go = threading.Barrier(clients + 1)
        threads = [threading.Thread(target=_drive, args=(node, tally, go)) for node in nodes]
        for thread in threads:
            thread.start()
        go.wait()
        began = time.perf_counter()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
        for node in nodes:
            node.client.close()
    ms = [t * 1000 for t in tally.requests] or [0.0]
    return {
        "clients": clients, "turns": len(tally.turns), "errors": tally.errors,
        "database": database_url or "sqlite (file in a temp folder)",
        "request_p50_ms": statistics.median(ms), "request_p99_ms": _percentile(ms, 0.99),
        "request_max_ms": max(ms),
        "turn_p99_ms": _percentile([t * 1000 for t in tally.turns] or [0.0], 0.99),
        "turns_per_s": len(tally.turns) / wall, "wall_s": wall,
    }


def _report(result: dict[str, Any]) -> None:
    print(f"{result['clients']} clients, {result['turns']} turns (2 HTTP requests each), "
          f"database: {result['database']}")
    print(f"errors: {len(result['errors'])}")
    for error in result["errors"][:10]:
        print(f"  {error}")
    print(f"center overhead per request: p50 {result['request_p50_ms']:.1f} ms, "
          f"p99 {result['request_p99_ms']:.1f} ms, max {result['request_max_ms']:.1f} ms")
    print(f"per turn: p99 {result['turn_p99_ms']:.1f} ms; "
          f"{result['turns_per_s']:.0f} turns/s over {result['wall_s']:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--turns", type=int, default=1000)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--postgres", action="store_true",
                       help=f"PostgreSQL at {POSTGRES}, in a schema dropped afterwards")
    where.add_argument("--database-url", default=None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--serve-llm", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-center", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--llm-port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_llm:
        _serve_llm(args.port)
        return
    if args.serve_center:
        _serve_center(args.port, args.llm_port, args.database_url, args.data_dir)
        return
    if args.postgres:
        with _postgres_schema(POSTGRES) as url:
            result = run(args.clients, args.turns, url)
    else:
        result = run(args.clients, args.turns, args.database_url)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _report(result)
    sys.exit(1 if result["errors"] else 0)


if __name__ == "__main__":
    main()
