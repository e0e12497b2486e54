"""A question for information is answered, not acted on (center/acting.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from center_helpers import function_tool, scripted_turn

from jarvis.center.acting import acts, declared_actions
from jarvis.center.keywords import (
    asks_a_question,
    asks_for_information,
    asks_how_much,
    asks_how_to,
    opens_with,
)
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_calls
from jarvis.center.toolspec import build_catalog

PLAY_SONG = function_tool("play_song", {"song_name": {"type": "string"}}, ["song_name"],
                          "Play the selected song on the device")
FIND_SONGS = function_tool("lookup_song", {"genre": {"type": "string"}}, [],
                           "Search for a song")
PLAYER = function_tool(
    "player",
    {"action": {"type": "string", "enum": ["play", "pause", "resume", "skip", "volume"]},
     "query": {"type": "string"}},
    ["action"], "Control the music player")
LISTS = function_tool(
    "lists", {"action": {"type": "string", "enum": ["add", "read", "remove", "clear"]},
              "item": {"type": "string"}},
    ["action"], "Keep a shopping list")
CALCULATOR = function_tool(
    "calculate", {"operation": {"type": "string",
                                "enum": ["add", "subtract", "multiply", "divide"]},
                  "a": {"type": "number"}, "b": {"type": "number"}},
    ["operation", "a", "b"], "Do arithmetic")
TOOLS = [PLAY_SONG, FIND_SONGS, PLAYER, LISTS, CALCULATOR]


@pytest.mark.parametrize(("tool", "arguments", "doing"), [
    ("play_song", {"song_name": "Hello"}, True),  # a verb of doing names it
    ("lookup_song", {"genre": "jazz"}, False),  # a verb of looking up
    ("player", {"action": "play"}, True),  # its action parameter chooses a doing
    ("player", {"action": "volume"}, False),
    ("lists", {"action": "read"}, False),
    ("lists", {"action": "add", "item": "milk"}, True),
    # An enum of operations is no choice of action: "add" here is arithmetic.
    ("calculate", {"operation": "add", "a": 5, "b": 3}, False),
])
def test_a_call_does_something_by_its_name_or_its_action(tool: str, arguments: dict[str, Any],
                                                         doing: bool) -> None:
    catalog = build_catalog(TOOLS, None)
    assert acts(catalog.tools[tool], arguments) is doing


PLAYER_COMMAND: dict[str, Any] = {
    "command_name": "player",
    "description": "Control the music player",
    "parameters": [{"name": "action", "type": "string", "required": True,
                    "enum_values": ["play", "pause", "volume"],
                    "enum_synonyms": {"play": ["put on", "stick on"], "volume": ["louder"]}}],
}


def test_what_a_tool_is_declared_to_do_is_what_an_order_opens_with() -> None:
    reserve = function_tool("reserve_restaurant", {}, description="Reserve a table")
    catalog = build_catalog([PLAY_SONG, reserve, LISTS], [PLAYER_COMMAND])
    declared = {name: declared_actions(spec) for name, spec in catalog.tools.items()}
    assert declared["play_song"] == ["play"]
    # A verb of trading stands for every other: "book a table" orders a reservation.
    assert {"reserve", "book", "buy"} <= set(declared["reserve_restaurant"])
    # An action's options, with the words the author declared for them.
    assert declared["player"] == ["play", "put on", "stick on", "pause"]
    assert declared["lists"] == ["add", "remove", "clear"]
    # Looking up or telling is said of more than orders ("tell me something interesting").
    assert declared_actions(build_catalog([FIND_SONGS], None).tools["lookup_song"]) == []
    assert opens_with("jarvis, stick on some abba", declared["player"])
    assert opens_with("book a table for two at eight", declared["reserve_restaurant"])
    # Only the opening counts: a word of it later on orders nothing.
    assert not opens_with("i love to play the piano", declared["play_song"])
    assert not opens_with("playing chess is fun", declared["play_song"])


def test_the_description_s_verb_comes_before_the_name_s() -> None:
    catalog = build_catalog([
        function_tool("open_weather", {}, description="Gets weather for a city"),
        function_tool("order_status", {}, description="Check the status of an order"),
        function_tool("get_ride", {}, description="Call a taxi to a given destination"),
        function_tool("bookTable", {}, description="A table at a restaurant"),
        function_tool("TableInfo", {}, description="The tables of a restaurant"),
        function_tool("calc_add", {}, description="Add two numbers"),
    ], None)
    assert acts(catalog.tools["open_weather"], {}) is False
    assert acts(catalog.tools["order_status"], {}) is False
    assert acts(catalog.tools["get_ride"], {}) is True
    # A description that opens with no verb leaves it to the name, camel case too.
    assert acts(catalog.tools["bookTable"], {}) is True
    assert acts(catalog.tools["TableInfo"], {}) is False
    # "Add" is arithmetic unless chosen among actions ("add", "read", "remove").
    assert acts(catalog.tools["calc_add"], {}) is False


@pytest.mark.parametrize(("utterance", "question"), [
    ("is jazz better than classical music", True),
    ("how do I set a timer on my microwave", True),
    ("did I leave the lights on when I went out", True),
    ("what's on my shopping list", True),
    ("Are you able to help me find a bus?", False),  # an action put as a question
    ("how about some jazz", False),
    ("Do you have a house available to book?", False),
    ("Is it possible to book a table for two?", False),
    ("jarvis, why don't you play something", False),
    ("play some jazz", False),
])
def test_a_question_is_told_from_an_action_put_as_one(utterance: str, question: bool) -> None:
    assert asks_a_question(utterance) is question


# --- in the engine (a scripted LLM: the test is about what the engine does with it) ------------
def _turn(tmp_path: Path, utterance: str, *replies: Any) -> tuple[Any, ScriptedBackend]:
    return scripted_turn(tmp_path, utterance, replies, TOOLS)


def test_a_question_answered_with_a_call_that_does_something_is_answered_in_words(
        tmp_path: Path) -> None:
    answer = text("Neither is better; they suit different moods.")
    played = tool_calls(("player", {"action": "play", "query": "jazz"}))
    response, backend = _turn(tmp_path, "is jazz better than classical music", played, answer)
    assert response.stop_reason == "complete"
    assert response.assistant_message == "Neither is better; they suit different moods."
    assert [r.tools_disabled for r in backend.requests] == [False, True]


def test_a_call_written_as_text_in_place_of_the_answer_is_refused(tmp_path: Path) -> None:
    added = tool_calls(("lists", {"action": "add", "item": "sunscreen"}))
    written = text('lists {"action": "add", "item": "sunscreen"}')
    response, _ = _turn(tmp_path, "what should go on a shopping list for a beach holiday",
                        added, written)
    assert response.stop_reason == "complete"
    assert response.assistant_message == "Sorry, I can't help with that."


def test_a_question_keeps_its_look_up_and_a_request_its_action(tmp_path: Path) -> None:
    found = tool_calls(("lookup_song", {"genre": "jazz"}))
    response, backend = _turn(tmp_path, "what jazz songs are there", found)
    assert response.stop_reason == "tool_calls"
    assert response.tool_calls[0].function.name == "lookup_song"
    assert len(backend.requests) == 1
    played = tool_calls(("player", {"action": "play", "query": "jazz"}))
    response, backend = _turn(tmp_path / "asked", "could you play some music", played)
    assert response.stop_reason == "tool_calls"
    assert len(backend.requests) == 1



CONVERT = function_tool(
    "convert_units",
    {"value": {"type": "number"}, "from_unit": {"type": "string"},
     "to_unit": {"type": "string"}},
    ["value", "from_unit", "to_unit"],
    "Convert an amount from one unit to another: cups, ounces, liters, miles")


@pytest.mark.parametrize(("utterance", "amount"), [
    ("how many cups of flour go into a loaf of bread", True),
    ("so how far is it from London to Leeds", True),
    ("how long should I boil an egg", True),
    ("how do I convert a recipe", False),  # a way, not an amount
    ("what's four plus four", False),
    ("tell me how many cups are in a liter", False),  # an order first
])
def test_a_question_for_an_amount_is_told(utterance: str, amount: bool) -> None:
    assert asks_how_much(utterance) is amount


def test_a_question_for_an_amount_nobody_gave_is_answered_not_asked_back(
        tmp_path: Path) -> None:
    # The amount a converter needs is what the question asks for: no question back.
    convert = tool_calls(("convert_units", {"from_unit": "miles", "to_unit": "km"}))
    answer = text("About 330 miles.")
    response, backend = scripted_turn(tmp_path, "how many miles is it from London to Leeds",
                                      [convert, answer], [CONVERT])
    assert response.stop_reason == "complete"
    assert response.assistant_message == "About 330 miles."
    assert [r.tools_disabled for r in backend.requests] == [False, True]
    # An amount said is converted; "a cup" says one, so the value is asked for.
    said = tool_calls(("convert_units", {"value": 2, "from_unit": "liters",
                                         "to_unit": "cups"}))
    response, _ = scripted_turn(tmp_path / "said", "how many cups are in 2 liters",
                                [said], [CONVERT])
    assert response.stop_reason == "tool_calls"
    cup = tool_calls(("convert_units", {"from_unit": "cup", "to_unit": "ounces"}))
    response, _ = scripted_turn(tmp_path / "cup", "how many ounces are in a cup",
                                [cup], [CONVERT])
    assert response.stop_reason == "validation_required"
    assert response.validation_request.parameter_name == "value"
    # "a" before a thing that is no unit says no number: the weight is what is asked.
    weigh = tool_calls(("convert_units", {"from_unit": "whale", "to_unit": "tons"}))
    response, _ = scripted_turn(tmp_path / "whale", "how much does a blue whale weigh in tons",
                                [weigh, text("About 150 tons.")], [CONVERT])
    assert response.stop_reason == "complete"
    assert response.assistant_message == "About 150 tons."
    # A sum put as "what is" is asked about as before.
    response, _ = scripted_turn(tmp_path / "sum", "what is for liters converted to cups",
                                [convert], [CONVERT])
    assert response.stop_reason == "validation_required"
    assert response.validation_request.parameter_name == "value"


@pytest.mark.parametrize(("utterance", "method"), [
    ("how do you convert a pdf into a word document", True),
    ("jarvis, how do I change a tyre", True),
    ("how to tie a tie", True),
    ("how should we store fresh basil", True),
    ("how can I reserve a car", False),  # a request put as a question
    ("how many cups are in a liter", False),  # an amount
    ("how about some jazz", False),
    ("convert a cup to ounces", False),
])
def test_a_question_for_a_method_is_told(utterance: str, method: bool) -> None:
    assert asks_how_to(utterance) is method


def test_a_question_for_a_method_that_gives_no_values_is_answered(tmp_path: Path) -> None:
    # "a pdf" is nothing a unit converter converts: the way is asked for, not a value.
    empty = tool_calls(("convert_units", {}))
    answer = text("Open it in a word processor and save it as a document.")
    response, backend = scripted_turn(tmp_path, "how do you convert a pdf into a word document",
                                      [empty, answer], [CONVERT])
    assert response.stop_reason == "complete"
    assert response.assistant_message == answer.content
    assert [r.tools_disabled for r in backend.requests] == [False, True]
    # The same form with every value said is a request for the tool's result.
    full = tool_calls(("convert_units", {"value": 3, "from_unit": "cups", "to_unit": "ml"}))
    response, _ = scripted_turn(tmp_path / "said", "how do I convert 3 cups to ml", [full],
                                [CONVERT])
    assert response.stop_reason == "tool_calls"


@pytest.mark.parametrize(("utterance", "question"), [
    ("remind me, what's the capital of australia", True),
    ("tell me, who wrote hamlet", True),
    ("remind me to ask what the capital of australia is", False),
    ("remind me, buy milk", False),
])
def test_a_question_after_a_clause_that_leads_in_is_a_question(utterance: str,
                                                               question: bool) -> None:
    assert asks_for_information(utterance) is question
    assert asks_a_question(utterance) is question
