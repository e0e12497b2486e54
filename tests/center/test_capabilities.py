""""What can you do?" answered from the conversation's tools (real HTTP, scripted LLM)."""

from __future__ import annotations

from typing import Any

import pytest
from center_helpers import CALCULATOR_COMMAND, WEATHER_TOOL, conversation_id, function_tool

from jarvis.center.capabilities import asks_what_i_can_do, what_i_can_do
from jarvis.center.llm.scripted import ScriptedBackend
from jarvis.center.toolspec import build_catalog


def test_what_can_you_do_lists_what_the_tools_do_without_the_llm(make_center: Any) -> None:
    backend = ScriptedBackend([])  # any LLM request would fail the turn
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL], commands=[CALCULATOR_COMMAND])
    reply = center.command(cid, "What can you do?")
    assert reply["stop_reason"] == "complete"
    assert reply["assistant_message"] == (
        "Here is what I can do: gets weather for a city; do arithmetic on two numbers.")
    assert backend.requests == []


@pytest.mark.parametrize("said", ["what can you do", "Hey Jarvis, what can you do for me?",
                                  "help", "what are your capabilities", "how can you help me"])
def test_questions_after_what_the_assistant_can_do(said: str) -> None:
    assert asks_what_i_can_do(said)


@pytest.mark.parametrize("said", ["help me find a bus", "what can you do about the noise",
                                  "what do you do when it rains", "can you help"])
def test_requests_that_only_share_the_words(said: str) -> None:
    assert not asks_what_i_can_do(said)


def test_each_tool_is_said_in_its_descriptions_first_clause() -> None:
    joke = function_tool("tell_joke", {}, [], "Tell a short, clean joke, optionally about a "
                                              "topic (animals, food, space...).")
    bus = function_tool("find_bus", {}, [], "Find a bus journey for a given pair of cities. "
                                            "Use for 'a bus to Fresno'.")
    catalog = build_catalog([joke, bus], None)
    assert what_i_can_do(catalog) == ("Here is what I can do: tell a short, clean joke; "
                                      "find a bus journey for a given pair of cities.")
    assert what_i_can_do(build_catalog([], None)).startswith("I have no commands")
