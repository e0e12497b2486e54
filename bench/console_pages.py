"""How fast the console's pages and the read API answer with 10,000 stored turns (SQLite).

The database is filled through the store's own write path (`Store.start`, `Store.commit`)
with conversations of two exchanges each (command -> tool_calls, continue -> complete)
spread over several nodes, then a real center (uvicorn, loopback port, scripted LLM)
serves each page `--repeat` times; the figures are wall-clock times seen by an HTTP
client. The goal is <= 100 ms per page.

    python bench/console_pages.py [--turns 10000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from jarvis.center.llm.scripted import ScriptedBackend, text
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.center.store import Store, TurnWrite

TOKEN = "bench-admin-token"
NODES = ("kitchen-pi", "office", "living-room", "bedroom", "garage")
GOAL_MS = 100.0
COMMAND = {
    "command_name": "set_timer",
    "description": "Start a countdown timer.",
    "parameters": [{"name": "duration", "type": "timedelta", "required": True,
                    "description": "How long", "example": "PT5M"},
                   {"name": "label", "type": "string", "required": False}],
    "examples": [{"voice_command": "set a timer for 5 minutes",
                  "expected_parameters": {"duration": "PT5M"}}],
}
TOOL = {"type": "function", "function": {"name": "set_timer", "description": "Timer",
        "parameters": {"type": "object", "properties": {"duration": {"type": "string"}}}}}


def _exchange(store: Store, cid: str, minutes: int) -> None:
    """One command turn and one continue turn, as the engine writes them."""
    record = store.load(cid)
    assert record is not None
    call = {"id": f"call_{cid}_{minutes}", "type": "function",
            "function": {"name": "set_timer", "arguments": f'{{"duration": "PT{minutes}M"}}'}}
    trace = {"llm_calls": [{"ms": 850.0, "tool_calls": [{"name": "set_timer"}],
                            "usage": {"prompt_tokens": 900, "completion_tokens": 12}}],
             "retries": [], "server_tools": [], "tool_calls": [{"id": call["id"]}],
             "tool_results": [], "voice_command": f"set a timer for {minutes} minutes",
             "stages_ms": {"history": 0.4, "prompt": 3.1, "llm": 850.0, "validate": 0.2}}
    record = store.commit(record, TurnWrite(
        endpoint="command", stop_reason="tool_calls", duration_ms=860.0, trace=trace,
        new_messages=[{"role": "user", "content": f"set a timer for {minutes} minutes"},
                      {"role": "assistant", "content": None, "tool_calls": [call]}],
        pending={"kind": "tool_calls", "calls": [{"id": call["id"], "name": "set_timer"}]}))
    result = {"role": "tool", "tool_call_id": call["id"], "name": "set_timer",
              "content": '{"success": true, "message": "Timer set."}'}
    store.commit(record, TurnWrite(
        endpoint="continue", stop_reason="complete", duration_ms=0.4,
        trace={"llm_calls": [], "tool_results": [{"id": call["id"], "success": True}],
               "direct_message": True, "stages_ms": {"history": 0.1}},
        new_messages=[result, {"role": "assistant", "content": "Timer set."}]))


def fill(url: str, turns: int) -> str:
    """Store `turns` turns; returns the id of the last conversation written."""
    store = Store(url)
    cid = ""
    try:
        for n in range(turns // 4):
            cid = f"bench-{n:06d}"
            node = NODES[n % len(NODES)]
            store.start(cid, {"timezone": "Europe/Paris", "node_id": node, "room": node},
                        [TOOL], [COMMAND])
            _exchange(store, cid, 5)
            _exchange(store, cid, 10)
    finally:
        store.close()
    return cid


def _time(client: httpx.Client, path: str, repeat: int) -> list[float]:
    client.get(path).raise_for_status()  # the first read warms caches: not counted
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        client.get(path).raise_for_status()
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'center.db'}"
        started = time.perf_counter()
        cid = fill(url, args.turns)
        print(f"stored {args.turns} turns in {time.perf_counter() - started:.1f} s")
        settings = CenterSettings(data_dir=folder, database_url=url, admin_token=TOKEN,
                                  log_level="warning")
        pages = ["/console", "/console?node=office", "/console?node=office&offset=400",
                 f"/console/conversations/{cid}", "/console/commands", "/console/nodes",
                 "/console/model", "/console/try", "/api/v0/conversations?limit=50",
                 f"/api/v0/conversations/{cid}", "/api/v0/nodes"]
        worst = 0.0
        with CenterServer(settings, ScriptedBackend([text("ok")], loop=True)) as server, \
                httpx.Client(base_url=server.url,
                             headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            print(f"{'page':<44} {'median ms':>10} {'p95 ms':>8} {'max ms':>8}")
            for path in pages:
                times = sorted(_time(client, path, args.repeat))
                p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
                worst = max(worst, p95)
                print(f"{path[:44]:<44} {statistics.median(times):>10.1f} {p95:>8.1f} "
                      f"{times[-1]:>8.1f}")
        verdict = "within" if worst <= GOAL_MS else "OVER"
        print(f"slowest p95: {worst:.1f} ms ({verdict} the {GOAL_MS:.0f} ms goal)")


if __name__ == "__main__":
    main()
