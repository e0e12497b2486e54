"""Two centers on one database racing on the same conversations: 200 or 409, never worse.

Each race sends the same request for one conversation to both centers at once. The
scripted LLM holds both requests until both have read the conversation (a barrier per
conversation), so every race is a real one: exactly one commit may win.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from center_helpers import WEATHER_TOOL, Center, conversation_id

from jarvis.center.llm.base import LLMReply, LLMRequest
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.center.store import ConcurrentUpdateError, Store, TurnWrite

CONVERSATIONS = 10
ROUNDS = 10
_TAG = re.compile(r"conv-[0-9a-f]{12}")


class RaceLLM:
    """A scripted LLM that, while racing, lets a conversation's requests on through in pairs."""

    def __init__(self) -> None:
        self.racing = threading.Event()
        self._barriers: dict[str, threading.Barrier] = {}
        self._lock = threading.Lock()

    def backend(self) -> ScriptedBackend:
        return ScriptedBackend([self.reply], loop=True)

    def reply(self, request: LLMRequest) -> LLMReply:
        said = next(m["content"] for m in reversed(request.messages) if m["role"] == "user")
        tag = _TAG.search(said)
        assert tag is not None, said
        if self.racing.is_set():
            with self._lock:
                barrier = self._barriers.setdefault(tag.group(), threading.Barrier(2))
            barrier.wait(timeout=30)
        if request.tools_disabled:
            return text(f"Sunny in {tag.group()}.")
        return tool_call("open_weather_command", city=tag.group())


@pytest.fixture
def two_centers(db_url: str, tmp_path: Path) -> Iterator[tuple[RaceLLM, Center, Center]]:
    llm = RaceLLM()
    centers: list[Center] = []
    for name in ("a", "b"):
        # No rate limit: each race is hundreds of requests from one node within seconds.
        settings = CenterSettings(data_dir=tmp_path / name, database_url=db_url,
                                  log_level="warning", rate_limit_per_minute=0)
        # One node, known to both centers through their database.
        node = (centers[0].node, centers[0].key) if centers else None
        centers.append(Center(CenterServer(settings, llm.backend()).start(), node))
    yield llm, centers[0], centers[1]
    for center in centers:
        center.close()


def _race(pool: ThreadPoolExecutor, centers: tuple[Center, Center], path: str,
          body: dict[str, Any]) -> list[httpx.Response]:
    futures = [pool.submit(c.client.post, path, json=body) for c in centers]
    return [f.result() for f in futures]


def _winner(responses: list[httpx.Response]) -> dict[str, Any]:
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200, 409], [r.text for r in responses]
    loser = next(r for r in responses if r.status_code == 409)
    assert "send this request again" in loser.json()["error"]
    return next(r for r in responses if r.status_code == 200).json()


def _rounds(pool: ThreadPoolExecutor, centers: tuple[Center, Center], cid: str) -> list[str]:
    """ROUNDS races of a new utterance, then of its tool results; the call ids handed out."""
    handed_out = []
    for _ in range(ROUNDS):
        said = {"conversation_id": cid, "voice_command": f"weather in {cid}"}
        won = _winner(_race(pool, centers, "/api/v0/voice/command", said))
        assert won["stop_reason"] == "tool_calls", won
        (call,) = won["tool_calls"]
        handed_out.append(call["id"])
        results = {"conversation_id": cid, "tool_results": [
            {"tool_call_id": call["id"], "output": {"success": True, "context": {"sun": 1}}}]}
        done = _winner(_race(pool, centers, "/api/v0/voice/command/continue", results))
        assert done["stop_reason"] == "complete", done
    return handed_out


def test_two_centers_racing_answer_200_or_409_and_stay_healthy(
    two_centers: tuple[RaceLLM, Center, Center],
) -> None:
    llm, a, b = two_centers
    ids = [conversation_id() for _ in range(CONVERSATIONS)]
    for cid in ids:
        a.start(cid, [WEATHER_TOOL])
    llm.racing.set()
    with (ThreadPoolExecutor(CONVERSATIONS) as conversations,
          ThreadPoolExecutor(2 * CONVERSATIONS) as requests):
        rounds = [conversations.submit(_rounds, requests, (a, b), cid) for cid in ids]
        handed_out = {cid: f.result() for cid, f in zip(ids, rounds, strict=True)}
    llm.racing.clear()
    every_id = [i for calls in handed_out.values() for i in calls]
    assert len(every_id) == len(set(every_id)) == CONVERSATIONS * ROUNDS
    # Each conversation holds exactly the calls handed out, once each, in order.
    for cid, calls in handed_out.items():
        history = b.store.history(b.store.load(cid))
        stored = [c["id"] for m in history for c in m.get("tool_calls") or []]
        assert stored == calls
        assert len(history) == 4 * ROUNDS  # utterance, call, result, answer
    # Both centers serve new conversations afterwards, on every worker connection.
    for center in (a, b):
        assert center.client.get("/health").json()["status"] == "ok"
        for _ in range(40):
            cid = conversation_id()
            center.start(cid, [WEATHER_TOOL])
            assert center.command(cid, f"weather in {cid}")["stop_reason"] == "tool_calls"


@pytest.mark.postgres
def test_postgres_connection_recovers_after_losing_races(pg_schema_url: str) -> None:
    first, second = Store(pg_schema_url), Store(pg_schema_url)
    cid = f"race-{uuid.uuid4().hex[:8]}"
    first.start(cid, {}, [], None)

    def write() -> TurnWrite:
        return TurnWrite("continue", new_messages=[{"role": "user", "content": "hi"}])

    try:
        # The same connection loses many times in a row: after each lost race its next
        # write, and a new conversation, must go through.
        for _ in range(12):
            stale = second.load(cid)
            first.commit(first.load(cid), write())
            with pytest.raises(ConcurrentUpdateError):
                second.commit(stale, write())
            second.commit(second.load(cid), write())
        other = f"fresh-{uuid.uuid4().hex[:8]}"
        assert second.start(other, {}, [], None)
        second.commit(second.load(other), write())
        assert second.load(cid).message_count == 24
    finally:
        first.close()
        second.close()
