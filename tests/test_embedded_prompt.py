"""The compact prompt a small model gets, the benchmark clock, and the too-long error.

No model needed: the center runs with a scripted backend that declares the compact style
(named as such), and the prompt pieces are checked as text.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from jarvis.center.engine import default_clock
from jarvis.center.llm.base import LLMPromptTooLongError, LLMReply, LLMRequest
from jarvis.center.llm.embedded.prompt import (
    TOOLS_FOOTER,
    slim_tools,
    tool_signature,
    with_tool_signatures,
)
from jarvis.center.llm.scripted import ScriptedBackend, tool_call
from jarvis.center.prompt import compact_dates_message, compact_system_prompt
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.center.toolspec import build_catalog
from jarvis.node.registry import discover_commands
from jarvis.sdk.context import CommandContext

NOW = datetime.fromisoformat("2026-01-14T10:00:00-05:00")
ZONE = {"timezone": "America/New_York"}


@pytest.fixture(scope="module")
def builtins() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    registry = discover_commands(CommandContext(), entry_points_enabled=False,
                                 yaml_tools=False, user_dir=None)
    return ([c.to_openai_tool_schema() for c in registry],
            [c.get_command_schema() for c in registry])


def test_compact_prompt_has_one_example_per_command_and_no_schemas(
    builtins: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    catalog = build_catalog(*builtins)
    text = compact_system_prompt(catalog)
    for name in catalog.tools:
        assert f"-> {name} " in text, name
    assert '"properties"' not in text  # the backend shows the schemas, not this text
    assert "resolve_relative_date" not in text
    # Much smaller than the full prompt (which does not fit a 4k context with 14 commands).
    assert len(text) < 3_000


def test_compact_prompt_lists_each_commands_keywords(
    builtins: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    catalog = build_catalog(*builtins)
    text = compact_system_prompt(catalog)
    lines = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in text.splitlines()
             if ": " in line and not line.startswith('"')}
    for name, tool in catalog.tools.items():
        keywords = [w for w in (tool.command or {}).get("keywords") or [] if len(w) > 2]
        if keywords:
            assert lines[name].split(", ") == keywords[:8], name  # the first eight
    assert "volume" in lines["music"].split(", ")
    assert "in" not in lines["convert_measurement"].split(", ")  # too short to point anywhere


def test_compact_dates_are_copyable_values_for_the_phrases() -> None:
    text = compact_dates_message(ZONE, NOW)
    assert "Wednesday 2026-01-14" in text
    assert "tomorrow" in text and "thursday: 2026-01-15T00:00:00-05:00" in text
    assert "this weekend, saturday: 2026-01-17T00:00:00-05:00" in text
    assert "10:00" not in text  # no clock: the message must stay the same all day
    later = datetime.fromisoformat("2026-01-14T18:30:00-05:00")
    assert compact_dates_message(ZONE, later) == text


def test_without_the_table_the_dates_message_is_the_day_alone() -> None:
    text = compact_dates_message(ZONE, NOW, table=False)
    assert text == "Today is Wednesday 2026-01-14 (timezone America/New_York)."


def test_tool_signatures_are_one_line_each_with_types_enums_and_optional_parameters(
    builtins: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    by_name = {t["function"]["name"]: t for t in builtins[0]}
    weather = tool_signature(by_name["get_weather"])
    assert weather.startswith('get_weather(city: str = None, resolved_datetimes: datetime[] = '
                              'None, unit: "metric" | "imperial" = None) - ')
    assert "\n" not in weather
    assert tool_signature(by_name["calculate"]).startswith(
        'calculate(num1: float, num2: float, operation: "add" | "subtract" | ')
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    shown = with_tool_signatures(messages, builtins[0])
    assert shown[1:] == messages[1:] and messages[0]["content"] == "Be brief."
    assert shown[0]["content"].startswith("Be brief.\n\n# Tools")
    assert shown[0]["content"].endswith(TOOLS_FOOTER)
    assert len(shown[0]["content"]) < len(json.dumps(slim_tools(builtins[0]))) * 0.7


def test_slim_tools_keep_shape_and_enums_but_drop_examples(
    builtins: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    slim = slim_tools(builtins[0])
    assert [t["function"]["name"] for t in slim] == [t["function"]["name"] for t in builtins[0]]
    weather = next(t for t in slim if t["function"]["name"] == "get_weather")
    city = weather["function"]["parameters"]["properties"]["city"]
    assert "Paris" not in city["description"] and "Example" not in city["description"]
    unit = weather["function"]["parameters"]["properties"]["unit"]
    assert unit["enum"] == ["metric", "imperial"]
    assert len(json.dumps(slim)) < len(json.dumps(builtins[0]))


def test_fake_now_fixes_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JARVIS_FAKE_NOW", "2026-01-14T10:00:00-05:00")
    assert default_clock()() == NOW
    monkeypatch.setenv("JARVIS_FAKE_NOW", "2026-01-14 10:00")
    with pytest.raises(ValueError, match="UTC offset"):
        default_clock()
    monkeypatch.setenv("JARVIS_FAKE_NOW", "soon")
    with pytest.raises(ValueError, match="ISO-8601"):
        default_clock()
    monkeypatch.delenv("JARVIS_FAKE_NOW")
    assert default_clock()().tzinfo is not None


class CompactScripted(ScriptedBackend):
    """Scripted LLM (protocol test) that asks for the compact prompt, and records warm-ups."""

    prompt_style = "compact"

    def __init__(self, replies: list[Any]) -> None:
        super().__init__(replies)
        self.warmed: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    def warm(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
             allow_direct_answer: bool = True) -> dict[str, Any]:
        self.warmed.append((messages, tools))
        return {}


def _start(server: CenterServer, cid: str,
           builtins: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> dict[str, str]:
    """Start the conversation as a node of its own; the headers that node sends."""
    auth = {"Authorization": f"Bearer {server.add_node(f'node-{cid}')}"}
    body = {"conversation_id": cid, "node_context": ZONE,
            "client_tools": builtins[0], "available_commands": builtins[1]}
    response = httpx.post(f"{server.url}/api/v0/conversation/start", json=body, headers=auth)
    assert response.status_code == 200
    return auth


def test_center_sends_the_compact_prompt_warms_it_and_nothing_follows_the_utterance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    builtins: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    monkeypatch.setenv("JARVIS_FAKE_NOW", "2026-01-14T10:00:00-05:00")
    backend = CompactScripted([tool_call("set_timer", duration="PT5M")])
    with CenterServer(settings=CenterSettings(data_dir=tmp_path), backend=backend) as server:
        auth = _start(server, "c1", builtins)
        reply = httpx.post(f"{server.url}/api/v0/voice/command", headers=auth,
                           json={"conversation_id": "c1", "voice_command": "5 minute timer"})
    assert reply.json()["stop_reason"] == "tool_calls"
    request: LLMRequest = backend.requests[0]
    roles = [m["role"] for m in request.messages]
    assert roles == ["system", "system", "user"]
    assert request.messages[-1]["content"] == "5 minute timer"
    assert request.allow_direct_answer
    names = {t["function"]["name"] for t in request.tools}
    assert names == {t["function"]["name"] for t in builtins[0]}  # no server tools
    # The warm-up (a background thread) read exactly the messages the request starts with.
    deadline = time.monotonic() + 5
    while not backend.warmed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert backend.warmed and backend.warmed[0][0] == request.messages[:2]


class HintedScripted(CompactScripted):
    """Scripted LLM (protocol test) that takes its dates from the center's date hints."""

    reads_date_hints = True


def test_a_backend_that_reads_date_hints_gets_no_date_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    builtins: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    monkeypatch.setenv("JARVIS_FAKE_NOW", "2026-01-14T10:00:00-05:00")
    backend = HintedScripted([tool_call("get_weather")])
    with CenterServer(settings=CenterSettings(data_dir=tmp_path), backend=backend) as server:
        auth = _start(server, "c3", builtins)
        httpx.post(f"{server.url}/api/v0/voice/command", headers=auth,
                   json={"conversation_id": "c3", "voice_command": "weather on friday at 5 pm"})
    request: LLMRequest = backend.requests[0]
    assert request.messages[1]["content"] == compact_dates_message(ZONE, NOW, table=False)
    assert request.date_hints == [["2026-01-16T17:00:00-05:00"]]
    assert request.time_hints == ["17:00"]


def test_a_prompt_too_long_for_the_model_is_said_so(
    tmp_path: Path, builtins: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    def too_long(_request: LLMRequest) -> LLMReply:
        raise LLMPromptTooLongError("the prompt is 7695 tokens but the context is 4096")

    backend = ScriptedBackend([too_long])
    with CenterServer(settings=CenterSettings(data_dir=tmp_path), backend=backend) as server:
        auth = _start(server, "c2", builtins)
        reply = httpx.post(f"{server.url}/api/v0/voice/command", headers=auth,
                           json={"conversation_id": "c2", "voice_command": "hello"}).json()
    assert reply["stop_reason"] == "error"
    assert "more than the language model can read" in reply["assistant_message"]
    assert "couldn't reach" not in reply["assistant_message"]
