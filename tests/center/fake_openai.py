"""A tiny OpenAI-compatible chat-completions server on loopback, for the openai backend tests.

Each incoming request takes the next planned behaviour: a completion (text or tool
calls), an HTTP status with a body, raw bytes, a delay longer than the client waits, or a
completion dripped one byte at a time (its headers, or its body after prompt headers), or a
streamed completion (`"stream": true`) sent piece by piece, holding its last piece back
until the test releases it.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(content: str | None = None,
               calls: list[tuple[str, dict[str, Any]]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(calls)
        ]
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "model": "fake",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def chunk(content: str) -> bytes:
    """One server-sent event of a streamed completion, carrying `content`."""
    data = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "fake",
            "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}
    return f"data: {json.dumps(data)}\n\n".encode()


class FakeOpenAI:
    """Plans: ("json", body) | ("status", code, text) | ("raw", bytes) | ("sleep", seconds)
    | ("drip", seconds_per_byte, "headers" or "body") | ("stream", [pieces]): all pieces
    but the last at once, the last once `release` is set (`last_sent` is set after it)."""

    def __init__(self) -> None:
        self.plan: deque[tuple[Any, ...]] = deque()
        self.stopped = threading.Event()
        self.release = threading.Event()
        self.last_sent = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "body": body})
                fake.headers.append(dict(self.headers))
                step = fake.plan.popleft() if fake.plan else ("status", 500, "no plan")
                kind = step[0]
                if kind == "sleep":
                    fake.stopped.wait(step[1])  # a server that never answers in time
                    step = ("json", completion("too late"))
                    kind = "json"
                if kind == "stream":
                    self._stream(step[1])
                elif kind == "drip":
                    self._drip(step[1], step[2])
                elif kind == "json":
                    self._send(200, json.dumps(step[1]).encode(), "application/json")
                elif kind == "status":
                    self._send(step[1], str(step[2]).encode(), "text/plain")
                else:
                    self._send(200, step[1], "application/json")

            def _drip(self, seconds: float, part: str) -> None:
                body = json.dumps(completion("dripped")).encode()
                head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(body)}\r\n\r\n").encode()
                slow = head + body if part == "headers" else body
                try:
                    if part != "headers":
                        self.wfile.write(head)
                        self.wfile.flush()
                    for index in range(len(slow)):
                        if fake.stopped.wait(seconds):
                            return
                        self.wfile.write(slow[index:index + 1])
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up, as it should
                self.close_connection = True

            def _stream(self, pieces: list[str]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    for piece in pieces[:-1]:
                        self.wfile.write(chunk(piece))
                        self.wfile.flush()
                    fake.release.wait(10)
                    self.wfile.write(chunk(pieces[-1]) + b"data: [DONE]\n\n")
                    self.wfile.flush()
                    fake.last_sent.set()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

            def _send(self, code: int, data: bytes, content_type: str) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self._server.shutdown()
        self._server.server_close()
