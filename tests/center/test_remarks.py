"""A remark on how something was asks for nothing (center/remarks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from center_helpers import function_tool, scripted_turn

from jarvis.center.llm.scripted import text, tool_calls
from jarvis.center.remarks import only_remarks, remarks_on_the_past


@pytest.mark.parametrize(("utterance", "remark"), [
    ("the forecast was spot on yesterday", True),
    ("that movie was really so boring", True),
    ("the concert tickets were cheap", True),
    ("it was way too hot on the beach, wasn't it", True),
    ("what was the score last night", False),  # a question: a look-up may answer it
    ("the weather was nice yesterday?", False),
    ("the alarm was too loud, can you turn it down", False),  # it asks now
    ("I was hoping to book a table for two", False),  # the polite past asks now
    ("we were looking for a cheap flight", False),
    ("I was wondering if you could find me a bus", False),
    ("the parcel was delivered this morning", False),  # an event a command may record
    ("I took my pills at eight", False),  # no "was": it may be logged
    ("play the song that was on the radio", False),  # a request opens with its verb
    ("work was brutal today", False),  # no determiner or pronoun first: not told
])
def test_a_remark_is_told_from_a_request(utterance: str, remark: bool) -> None:
    assert remarks_on_the_past(utterance) is remark


@pytest.mark.parametrize(("utterance", "remark"), [
    ("the lights in paris are beautiful at night", True),  # a judgement of how it is
    ("this song is really great", True),
    ("i love this song", True),  # a liking of something at hand
    ("Jarvis, we really hate that movie!", True),
    ("the weather was lovely yesterday", True),
    ("jarvis, the concert was great, thanks", True),  # a lead-in and thanks ask nothing
    ("the oven is on", False),  # a state: something may be done about it
    ("it's cold in here", False),
    ("this song is great, play it again", False),  # a second clause asks
    ("that restaurant is amazing, book a table", False),
    ("is the weather nice in rome", False),
    ("i'd love to hear some jazz", False),  # a wish
    ("i like to listen to jazz", False),
    ("i like this song please play it", False),
    ("i like jazz", False),  # a taste, nothing pointed at
])
def test_a_remark_on_how_it_is_or_a_liking_is_told(utterance: str, remark: bool) -> None:
    assert only_remarks(utterance) is remark


@pytest.mark.parametrize(("utterance", "remark"), [
    ("my husband always leaves the porch light on", True),  # a habit told
    ("we never use the timer on the microwave", True),
    ("nobody in this house ever adds milk to the list", True),
    ("my brother keeps playing the same song", True),
    ("we used to roll dice for the chores", True),
    ("i hope the snow melts before the weekend", True),  # a hope about the world
    ("i really wish that it was warmer in march", True),
    ("I always forget to buy milk, add it to my list", False),  # a second clause asks
    ("I usually take the bus, find me one at 8", False),
    ("play the song we always play on fridays", False),  # a request opens with its verb
    ("do you always play the same songs", False),  # a question
    ("my alarm never goes off, is it set?", False),
    ("I usually like to eat Italian food in San Jose", False),  # a liking asks here
    ("I hope to find a cheap restaurant", False),  # the speaker's own doing asks
    ("I hope you can book me a table", False),  # the assistant's doing asks
    ("I wish there was a bus to Fresno tomorrow", False),  # "there is" asks whether
    ("I hope the restaurant has a table, can you check", False),
])
def test_a_habit_or_a_hope_is_told_from_a_request(utterance: str, remark: bool) -> None:
    assert only_remarks(utterance) is remark


@pytest.mark.parametrize(("utterance", "remark"), [
    ("kids, dinner in ten minutes", True),  # said to someone in the room
    ("hey honey, the oven timer went off", True),
    ("dad, can you turn the lights off", True),
    ("jarvis, honey, set a timer", False),  # the assistant is named
    ("honey the pizza is here", False),  # no comma: "honey" may be a word of the request
    ("mom's birthday is friday, remind me", False),
    ("honey,", False),  # nothing said to them
])
def test_talk_to_someone_else_asks_nothing_of_the_assistant(utterance: str,
                                                            remark: bool) -> None:
    assert only_remarks(utterance) is remark


# --- in the engine (a scripted LLM: the test is about what the engine does with it) ------------
FORECAST = function_tool("get_forecast", {"city": {"type": "string"}}, [],
                         "Gets the weather forecast for a city")


def test_a_remark_answered_with_a_call_is_answered_in_words(tmp_path: Path) -> None:
    called = tool_calls(("get_forecast", {}))
    answer = text("Glad you enjoyed it!")
    response, backend = scripted_turn(tmp_path, "the weather was glorious on saturday",
                                      [called, answer], [FORECAST])
    assert response.stop_reason == "complete"
    assert response.assistant_message == "Glad you enjoyed it!"
    assert [r.tools_disabled for r in backend.requests] == [False, True]


def test_a_request_beside_a_past_remark_keeps_its_call(tmp_path: Path) -> None:
    called = tool_calls(("get_forecast", {"city": "Oslo"}))
    response, backend = scripted_turn(tmp_path, "the weather was awful, what's it like in Oslo",
                                      [called], [FORECAST])
    assert response.stop_reason == "tool_calls"
    assert len(backend.requests) == 1


def test_a_liking_answered_with_a_call_is_answered_in_words(tmp_path: Path) -> None:
    player = function_tool("play_music", {"query": {"type": "string"}}, ["query"],
                           "Play a song")
    played = tool_calls(("play_music", {"query": "i love this song"}))
    answer = text("Glad you like it!")
    response, backend = scripted_turn(tmp_path, "i love this song", [played, answer], [player])
    assert response.stop_reason == "complete"
    assert response.assistant_message == "Glad you like it!"
    assert [r.tools_disabled for r in backend.requests] == [False, True]
