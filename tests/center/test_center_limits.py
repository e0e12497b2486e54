"""Limits on what one node may ask of the center: tools, their names and schemas, and the
rate of requests. Each refusal is a 4xx in the documented error model, over real HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from center_helpers import WEATHER_TOOL, Center, conversation_id, function_tool

from jarvis.center.llm.scripted import ScriptedBackend, text
from jarvis.center.ratelimit import RateLimit, RateLimitedError, RateLimiter
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.center.toolspec import MAX_SCHEMA_DEPTH
from jarvis.protocol.models import MAX_TOOLS

START = "/api/v0/conversation/start"
COMMAND = "/api/v0/voice/command"


@pytest.fixture
def sqlite_center(tmp_path: Path) -> Iterator[Callable[..., Center]]:
    """`sqlite_center(**settings)`: a center on a SQLite file that replies "Fine." forever."""
    started: list[Center] = []

    def make(**settings: Any) -> Center:
        settings = {"data_dir": tmp_path, "log_level": "warning", **settings}
        backend = ScriptedBackend([text("Fine.")], loop=True)
        center = Center(CenterServer(CenterSettings(**settings), backend).start())
        started.append(center)
        return center

    yield make
    for center in started:
        center.close()


def _start_body(cid: str, tools: list[dict[str, Any]], node_id: str = "kitchen-pi",
                commands: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"conversation_id": cid, "client_tools": tools,
                            "node_context": {"timezone": "UTC", "node_id": node_id}}
    if commands is not None:
        body["available_commands"] = commands
    return body


def _error(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "detail"}, body
    return str(body["error"])


def _nested(levels: int) -> dict[str, Any]:
    """A parameters schema `levels` deep: objects holding one array of objects each."""
    schema: dict[str, Any] = {"type": "string"}
    depth = 1
    while depth + 2 <= levels:
        schema = {"type": "object", "properties": {"x": schema}}
        depth += 2
    if depth < levels:
        schema = {"type": "array", "items": schema}
        depth += 1
    return schema


# --- tools ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["get weather", "weather.get", "météo", "x" * 65, "a/b", ""])
def test_a_tool_name_outside_letters_digits_and_dashes_is_422(
        sqlite_center: Any, name: str) -> None:
    center = sqlite_center()
    cid = conversation_id()
    tool = function_tool(name, {"city": {"type": "string"}})
    error = _error(center.client.post(START, json=_start_body(cid, [tool])), 422)
    assert error.startswith("invalid request: client_tools: invalid tools: "), error
    assert ("letters, digits" in error) if name else ("needs function.name" in error)
    command = {"command_name": name or "?", "parameters": []}
    error = _error(center.client.post(START, json=_start_body(cid, [], commands=[command])), 422)
    assert error.startswith("invalid request: available_commands: "), error
    assert "letters, digits" in error and len(error) < 300
    assert center.store.load(cid) is None


def test_a_schema_nested_past_the_limit_is_422_and_one_at_it_is_taken(sqlite_center: Any) -> None:
    from jarvis.center.toolspec import _depth

    center = sqlite_center()
    at_limit, past = _nested(MAX_SCHEMA_DEPTH), _nested(MAX_SCHEMA_DEPTH + 1)
    assert _depth(at_limit) == MAX_SCHEMA_DEPTH and _depth(past) == MAX_SCHEMA_DEPTH + 1
    ok = conversation_id()
    tool = {"type": "function", "function": {"name": "deep", "parameters": at_limit}}
    assert center.client.post(START, json=_start_body(ok, [tool])).status_code == 200
    bad = conversation_id()
    tool = {"type": "function", "function": {"name": "deep", "parameters": past}}
    error = _error(center.client.post(START, json=_start_body(bad, [tool])), 422)
    assert f"tool 'deep': parameters are nested deeper than {MAX_SCHEMA_DEPTH} levels" in error
    assert center.store.load(bad) is None


def test_more_tools_than_a_conversation_may_have_is_422(sqlite_center: Any) -> None:
    center = sqlite_center()
    tools = [function_tool(f"tool_{i}", {}) for i in range(MAX_TOOLS)]
    cid = conversation_id()
    assert center.client.post(START, json=_start_body(cid, tools)).status_code == 200
    # Each list is within bounds; together they name one tool too many.
    extra = [{"command_name": "one_more", "parameters": []}]
    body = _start_body(cid, tools, commands=extra)
    error = _error(center.client.post(START, json=body), 422)
    assert f"{MAX_TOOLS + 1} tools; a conversation has at most {MAX_TOOLS}" in error
    too_long = [*tools, function_tool("one_more", {})]
    error = _error(center.client.post(START, json=_start_body(cid, too_long)), 422)
    assert error.startswith("invalid request: client_tools: "), error
    assert len(center.store.load(cid).client_tools) == MAX_TOOLS


# --- rate limit -------------------------------------------------------------------------
def test_the_token_bucket_allows_a_burst_then_the_rate() -> None:
    now = [100.0]
    limiter = RateLimiter(RateLimit(per_minute=30, burst=3), clock=lambda: now[0])
    for _ in range(3):
        limiter.admit("kitchen")
    with pytest.raises(RateLimitedError) as refused:
        limiter.admit("kitchen")
    assert refused.value.retry_after == pytest.approx(2.0)  # 30 a minute: one every 2 s
    limiter.admit("bedroom")  # each node has its own bucket
    now[0] += 1.0
    with pytest.raises(RateLimitedError) as refused:
        limiter.admit("kitchen")
    assert refused.value.retry_after == pytest.approx(1.0)  # a refusal takes nothing
    now[0] += 1.0
    limiter.admit("kitchen")
    now[0] += 3600.0
    for _ in range(3):  # a long pause refills the bucket to the burst, no further
        limiter.admit("kitchen")
    with pytest.raises(RateLimitedError):
        limiter.admit("kitchen")
    unlimited = RateLimiter(RateLimit(per_minute=0, burst=1))
    for _ in range(100):
        unlimited.admit("kitchen")


def test_a_node_over_its_rate_gets_429_with_retry_after_and_nothing_is_stored(
        sqlite_center: Any) -> None:
    # One token every 5 s: three requests never take that long, even on a loaded machine.
    center = sqlite_center(rate_limit_per_minute=12, rate_limit_burst=3)
    cid = conversation_id()
    assert center.client.post(START, json=_start_body(cid, [WEATHER_TOOL])).status_code == 200
    center.command(cid, "hello")
    center.command(cid, "hello again")
    refused = center.client.post(COMMAND, json={"conversation_id": cid, "voice_command": "hi"})
    error = _error(refused, 429)
    # The bucket is the authenticated node's, whatever node_id the body declares.
    assert error.startswith(f"too many requests from node '{center.node}'"), error
    wait = int(refused.headers["retry-after"])
    assert 1 <= wait <= 5
    assert refused.json()["detail"] == {"node_id": center.node, "retry_after": wait}
    assert center.store.load(cid).message_count == 4  # two turns, not three
    # Another node (another key) has its own bucket.
    bedroom = httpx.Client(base_url=center.url, timeout=30, headers={
        "Authorization": f"Bearer {center.server.add_node(f'bedroom-{center.node}')}"})
    other = conversation_id()
    body = _start_body(other, [WEATHER_TOOL], node_id="bedroom-pi")
    assert bedroom.post(START, json=body).status_code == 200
    said = bedroom.post(COMMAND, json={"conversation_id": other, "voice_command": "hello"})
    assert said.json()["assistant_message"] == "Fine."
    bedroom.close()
    time.sleep(int(refused.headers["retry-after"]))
    assert center.command(cid, "hi")["assistant_message"] == "Fine."


def test_a_rate_of_zero_turns_the_limit_off(sqlite_center: Any) -> None:
    center = sqlite_center(rate_limit_per_minute=0, rate_limit_burst=1)
    cid = conversation_id()
    assert center.client.post(START, json=_start_body(cid, [WEATHER_TOOL])).status_code == 200
    for _ in range(40):
        center.command(cid, "hello")


def test_by_default_a_flood_of_requests_is_cut_short(sqlite_center: Any) -> None:
    center = sqlite_center()
    defaults = CenterSettings()
    cid = conversation_id()
    assert center.client.post(START, json=_start_body(cid, [WEATHER_TOOL])).status_code == 200
    began = time.monotonic()
    statuses = [center.client.post(COMMAND, json={"conversation_id": cid,
                                                  "voice_command": "hi"}).status_code
                for _ in range(80)]
    refilled = (time.monotonic() - began) * defaults.rate_limit_per_minute / 60
    burst = defaults.rate_limit_burst - 1  # the start took one
    assert statuses[:burst] == [200] * burst, statuses
    assert set(statuses) == {200, 429}
    assert statuses.count(200) <= burst + refilled + 1, statuses


def test_the_node_client_waits_out_a_short_retry_after_and_reports_a_long_one(
        sqlite_center: Any) -> None:
    from jarvis.node import CenterError, JarvisCommandCenterClient
    from jarvis.protocol import NodeContext

    for per_minute, waits in ((60, True), (1, False)):
        center = sqlite_center(rate_limit_per_minute=per_minute, rate_limit_burst=2)
        cid = conversation_id()
        with JarvisCommandCenterClient(center.url, key=center.key) as client:
            client.start_conversation(cid, NodeContext(node_id="kitchen-pi"), [WEATHER_TOOL])
            assert client.send_command("hello", cid).assistant_message == "Fine."
            began = time.monotonic()
            if waits:  # a second's wait: the client sends the request again after it
                assert client.send_command("hello", cid).assistant_message == "Fine."
                assert time.monotonic() - began >= 0.5
                continue
            with pytest.raises(CenterError) as refused:  # a minute's wait: the caller decides
                client.send_command("hello", cid)
            assert refused.value.status_code == 429
            assert refused.value.message.startswith(f"too many requests from node '{center.node}'")
            assert time.monotonic() - began < 5
