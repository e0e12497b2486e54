"""How much a center request costs next to a bare FastAPI endpoint, durable writes included.

A turn is `POST /voice/command` (-> tool_calls) then `POST /voice/command/continue`
with the tool's result (-> complete, spoken directly from the result). The LLM is a
zero-latency scripted backend, so what is measured is the center itself: HTTP, body
validation, conversation load, tool-call validation, prompt assembly and the one write
transaction per request. The baseline is a bare FastAPI app whose two routes echo the
JSON they receive, served by uvicorn the same way. Both servers run in their own child
processes on loopback; turns alternate between them so that machine noise hits both.

    python bench/center_overhead.py [--turns 300] [--database-url URL]
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
import time
from pathlib import Path
from typing import Any

import httpx

from load import add_nodes

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
CONVERSATIONS = 10


def _serve_center(port: int, database_url: str | None, data_dir: str) -> None:
    from jarvis.center.llm.scripted import ScriptedBackend, tool_call
    from jarvis.center.server import CenterServer
    from jarvis.center.settings import CenterSettings

    backend = ScriptedBackend([tool_call("open_weather_command", city="Miami")], loop=True)
    # Hundreds of turns back to back from one client: no rate limit.
    settings = CenterSettings(
        data_dir=Path(data_dir), database_url=database_url, log_level="warning", port=port,
        rate_limit_per_minute=0,
    )
    with CenterServer(settings, backend, port=port):
        while True:
            time.sleep(3600)


def _serve_bare(port: int) -> None:
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    from jarvis.center.server import serve_app_in_thread

    app = FastAPI()

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/api/v0/voice/command")
    async def command(body: dict[str, Any]) -> JSONResponse:
        return JSONResponse(body)

    @app.post("/api/v0/voice/command/continue")
    async def continue_(body: dict[str, Any]) -> JSONResponse:
        return JSONResponse(body)

    serve_app_in_thread(app, port=port)
    while True:
        time.sleep(3600)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spawn(kind: str, port: int, extra: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, __file__, "--serve", kind, "--port", str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait(base: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{base} did not start")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _center_turn(client: httpx.Client, cid: str, timings: list[float]) -> None:
    t0 = time.perf_counter()
    reply = client.post(
        "/api/v0/voice/command",
        json={"conversation_id": cid, "voice_command": "What's the weather in Miami?"},
    )
    t1 = time.perf_counter()
    body = reply.json()
    if body["stop_reason"] != "tool_calls":
        raise RuntimeError(f"unexpected reply: {body}")
    call_id = body["tool_calls"][0]["id"]
    done = client.post(
        "/api/v0/voice/command/continue",
        json={
            "conversation_id": cid,
            "tool_results": [
                {
                    "tool_call_id": call_id,
                    "output": {
                        "success": True,
                        "message": "It's 73 degrees and sunny in Miami.",
                        "context": {"temperature_f": 73, "condition": "sunny"},
                    },
                }
            ],
        },
    )
    t2 = time.perf_counter()
    if done.json()["stop_reason"] != "complete":
        raise RuntimeError(f"unexpected reply: {done.text}")
    timings.extend([t1 - t0, t2 - t1])


def _bare_turn(client: httpx.Client, cid: str, timings: list[float]) -> None:
    t0 = time.perf_counter()
    client.post(
        "/api/v0/voice/command",
        json={"conversation_id": cid, "voice_command": "What's the weather in Miami?"},
    ).json()
    t1 = time.perf_counter()
    client.post(
        "/api/v0/voice/command/continue",
        json={
            "conversation_id": cid,
            "tool_results": [
                {
                    "tool_call_id": "call_1",
                    "output": {
                        "success": True,
                        "message": "It's 73 degrees and sunny in Miami.",
                        "context": {"temperature_f": 73, "condition": "sunny"},
                    },
                }
            ],
        },
    ).json()
    t2 = time.perf_counter()
    timings.extend([t1 - t0, t2 - t1])


def _summary(name: str, timings: list[float], wall: float) -> dict[str, float]:
    return {
        "name": name,  # type: ignore[dict-item]
        "p50_ms": statistics.median(timings) * 1000,
        "p99_ms": _percentile(timings, 0.99) * 1000,
        "mean_ms": statistics.fmean(timings) * 1000,
        "requests_per_s": len(timings) / wall,
    }


def run(turns: int, database_url: str | None) -> dict[str, Any]:
    data_dir = tempfile.mkdtemp(prefix="jarvis-bench-")
    center_port, bare_port = _free_port(), _free_port()
    extra = ["--data-dir", data_dir] + (["--database-url", database_url] if database_url else [])
    # The node's key, made in the center's database before the center starts.
    [key] = add_nodes(database_url, data_dir, ["bench"])
    center_proc = _spawn("center", center_port, extra)
    bare_proc = _spawn("bare", bare_port, [])
    center_base = f"http://127.0.0.1:{center_port}"
    bare_base = f"http://127.0.0.1:{bare_port}"
    try:
        _wait(center_base, center_proc)
        _wait(bare_base, bare_proc)
        # Small requests are sent as headers + body: without TCP_NODELAY, Nagle's algorithm
        # and delayed ACKs would add ~40 ms to every request on both sides alike.
        nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        center = httpx.Client(base_url=center_base, timeout=30,
                              headers={"Authorization": f"Bearer {key}"},
                              transport=httpx.HTTPTransport(socket_options=nodelay))
        bare = httpx.Client(base_url=bare_base, timeout=30,
                            transport=httpx.HTTPTransport(socket_options=nodelay))
        run_id = os.urandom(4).hex()
        ids = [f"bench-{run_id}-{i}" for i in range(CONVERSATIONS)]
        for cid in ids:
            center.post(
                "/api/v0/conversation/start",
                json={"conversation_id": cid, "node_context": {"timezone": "America/New_York"},
                      "client_tools": [WEATHER_TOOL]},
            ).raise_for_status()
        warm: list[float] = []
        for i in range(20):  # warm-up: connections, caches, JIT-free but lazy imports
            _center_turn(center, ids[i % CONVERSATIONS], warm)
            _bare_turn(bare, ids[i % CONVERSATIONS], warm)
        center_t: list[float] = []
        bare_t: list[float] = []
        center_wall = bare_wall = 0.0
        for i in range(turns):
            cid = ids[i % CONVERSATIONS]
            t0 = time.perf_counter()
            _center_turn(center, cid, center_t)
            t1 = time.perf_counter()
            _bare_turn(bare, cid, bare_t)
            t2 = time.perf_counter()
            center_wall += t1 - t0
            bare_wall += t2 - t1
        c = _summary("center", center_t, center_wall)
        b = _summary("bare", bare_t, bare_wall)
        return {
            "turns": turns,
            "database": database_url or "sqlite (file in a temp folder)",
            "center": c,
            "bare": b,
            "center_turns_per_s": turns / center_wall,
            "ratio_p50": c["p50_ms"] / b["p50_ms"],
            "ratio_p99": c["p99_ms"] / b["p99_ms"],
            "ratio_mean": c["mean_ms"] / b["mean_ms"],
        }
    finally:
        for process in (center_proc, bare_proc):
            process.terminate()
            process.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--serve", choices=["center", "bare"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve == "center":
        _serve_center(args.port, args.database_url, args.data_dir)
        return
    if args.serve == "bare":
        _serve_bare(args.port)
        return
    result = run(args.turns, args.database_url)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['turns']} turns (2 HTTP requests each), database: {result['database']}")
    print(f"{'':8} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'req/s':>8}")
    for key in ("center", "bare"):
        s = result[key]
        print(f"{key:8} {s['p50_ms']:8.2f} {s['p99_ms']:8.2f} {s['mean_ms']:8.2f} "
              f"{s['requests_per_s']:8.0f}")
    print(f"center turns/s: {result['center_turns_per_s']:.0f}")
    print(f"ratio per HTTP request (center / bare): p50 {result['ratio_p50']:.2f}x, "
          f"p99 {result['ratio_p99']:.2f}x, mean {result['ratio_mean']:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
