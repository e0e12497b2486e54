"""Answers in words that report what only a tool could know are refused."""

from __future__ import annotations

from typing import Any

import pytest
from center_helpers import WEATHER_TOOL, conversation_id

from jarvis.center.claims import REFUSAL, states_tool_facts
from jarvis.center.llm.scripted import ScriptedBackend, text


@pytest.mark.parametrize("answer", [
    "The weather in Atlanta, GA is sunny with a mild breeze.",
    "It's 22 degrees in London.",
    "Timer stopped.",
    "I've booked a table for you at 7 pm.",
    "Your balance is $1,200.",
    "There are 10 minutes left on the pizza timer.",
    "I have added milk to your list.",
    "The lights are now off.",
    "It is 3:45.",
    "Here are some Italian restaurants in San Jose.",
    "I found 3 flights to Chicago.",
    "Your table is confirmed.",
    "Your reservation is on March 6th.",
    "Now playing Hello by Adele.",
    "You could visit: 1. The Great Wall of China, a UNESCO site. 2. The Louvre.",
    "Some options:\n1) Cafe Roma\n2) Sushi Bar",
    "Attractions:\n\n1. The Great Wall of China: a UNESCO site,\nwith 1,000 km of walls. 2.",
])
def test_reports_of_results_are_tool_facts(answer: str) -> None:
    assert states_tool_facts(answer)


@pytest.mark.parametrize("answer", [
    "Hello! How can I help?",
    "A spider has eight legs.",
    "The capital of Peru is Lima.",
    "Mix 1. flour and sugar first.",
    "You're welcome!",
    "I'm doing well, thanks for asking.",
    "Sorry, I can't help with that.",
    "May I know where you want to go?",
    "There are many ways to cook rice.",
])
def test_small_talk_and_general_knowledge_are_not(answer: str) -> None:
    assert not states_tool_facts(answer)


def test_a_made_up_result_is_spoken_as_a_refusal(make_center: Any) -> None:
    backend = ScriptedBackend([text("The weather in Atlanta is sunny and 75 degrees."),
                               text("Lima is the capital of Peru.")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    reply = center.command(cid, "what's the weather like in atlanta")
    assert (reply["stop_reason"], reply["assistant_message"]) == ("complete", REFUSAL)
    kept = center.command(cid, "what's the capital of peru")
    assert kept["assistant_message"] == "Lima is the capital of Peru."
