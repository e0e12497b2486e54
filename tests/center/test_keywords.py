"""Routing keywords heard in an utterance: the prior the center gives the LLM's tool choice."""

from __future__ import annotations

import pytest

from jarvis.center.keywords import (
    after_lead_ins,
    asks_for_information,
    keyword_heard,
    keyword_hints,
    says_searching,
    words,
)
from jarvis.node.registry import discover_commands
from jarvis.sdk.context import CommandContext

BUILTIN_KEYWORDS = {
    c.command_name: c.keywords
    for c in discover_commands(CommandContext(timezone="UTC"), entry_points_enabled=False,
                               yaml_tools=False, user_dir=None)
}


def test_words_ignore_case_and_punctuation_but_keep_apostrophes() -> None:
    assert words("Don't forget: Call MOM, tomorrow!") == ["don't", "forget", "call", "mom",
                                                          "tomorrow"]
    assert words("don\u2019t") == ["don't"]


@pytest.mark.parametrize(
    ("heard", "keyword"),
    [
        ("set a timer", "timer"),
        ("how many timers are running", "timer"),  # plural
        ("whats the whether in boston", "weather"),  # misheard, close enough
        ("turn off the porch light", "turn off"),  # a phrase
        ("is it rainy", "rain"),
        ("don't forget the milk", "don't forget"),
        ("i cleared the gutters, tick that off", "tick off"),  # a pronoun splits the verb
        ("the timer went off, turn it off", "turn off"),
        ("a table for six people", "person"),  # a plural no ending makes
        ("how tall is six foot", "feet"),
    ],
)
def test_heard(heard: str, keyword: str) -> None:
    assert keyword_heard(words(heard), keyword)


@pytest.mark.parametrize(
    ("heard", "keyword"),
    [
        ("what time is it", "timer"),  # a different word, not a misspelling
        ("set a timer", "time"),  # "timer" is not "time" with an ending
        ("put it in the box", "in"),  # two letters point everywhere
        ("turn the oven off", "turn off"),  # a phrase needs its words together
        ("tick the box off", "tick off"),  # only a pronoun may split it
        ("play some music", "musical"),
        ("book me a flight to rome", "light"),  # a different first sound: another word
        ("", "timer"),
    ],
)
def test_not_heard(heard: str, keyword: str) -> None:
    assert not keyword_heard(words(heard), keyword)


def test_hints_count_distinct_keywords_per_tool() -> None:
    hints = keyword_hints("will it rain or snow in the forecast, rain rain",
                          {"get_weather": ["rain", "snow", "forecast", "rain"],
                           "set_timer": ["timer"]})
    assert hints == {"get_weather": 3.0}


def test_builtin_keywords_tell_look_alike_commands_apart() -> None:
    volume = keyword_hints("turn the volume up", BUILTIN_KEYWORDS)
    assert "music" in volume and "set_timer" not in volume
    weather = keyword_hints("whats the whether tomorrow", BUILTIN_KEYWORDS)
    assert set(weather) == {"get_weather"}


def test_small_talk_names_no_command() -> None:
    for said in ("um", "okay", "thank you so much", "who painted the mona lisa"):
        assert keyword_hints(said, BUILTIN_KEYWORDS) == {}, said


@pytest.mark.parametrize(
    ("utterance", "tool", "heard"),
    [
        ("how many legs does a spider have", "convert_measurement", False),  # a question
        ("how many calories are in a banana", "convert_measurement", False),
        ("what is 68 kilos in pounds", "convert_measurement", True),
        ("how many cups in a quart", "convert_measurement", True),
        ("go back to the previous track", "music", True),
        # The clock by its phrases, not by every "time" or "day" said.
        ("what time is it in tokyo", "get_current_time", True),
        ("whats the time over in dubai", "get_current_time", True),
        ("what's today's date", "get_current_time", True),
        ("what's the best movie of all time", "get_current_time", False),
        ("i had a really rough day at work", "get_current_time", False),
        ("what is 12 times 7", "get_current_time", False),
        ("how long until the pasta is done", "check_timers", True),
        ("how long do you boil an egg", "check_timers", False),
        ("dont let me forget my pills", "reminder", True),
        ("shut off the tv in the den", "control_device", True),
    ],
)
def test_builtin_keywords(utterance: str, tool: str, heard: bool) -> None:
    hints = keyword_hints(utterance, BUILTIN_KEYWORDS)
    assert (hints.get(tool, 0) > 0) is heard, hints


@pytest.mark.parametrize(
    ("utterance", "tool"),
    [
        ("cancel the reminder about the vet", "reminder"),  # a verb both share, one noun
        ("cancel the pasta timer", "cancel_timer"),
        ("set a timer", "set_timer"),
    ],
)
def test_builtin_keywords_single_out_one_command(utterance: str, tool: str) -> None:
    hints = keyword_hints(utterance, BUILTIN_KEYWORDS)
    assert all(v < hints[tool] for k, v in hints.items() if k != tool), hints


def test_a_plain_tool_is_known_by_the_distinctive_words_of_its_declaration() -> None:
    from jarvis.center.keywords import description_hints, description_words

    tools = description_words({
        "get_ride": "get_ride Book a cab to a destination",
        "reserve_hotel": "reserve_hotel Book a room at a hotel",
        "find_restaurants": "find_restaurants Find a restaurant of a cuisine in a city",
    })
    assert tools["get_ride"] == {"ride": 1.0, "book": 0.5, "cab": 1.0, "destination": 1.0}
    assert "find" not in tools["find_restaurants"]  # a word of no meaning here
    assert description_hints("I need a cab please", tools) == {"get_ride": 1.0}
    assert description_hints("book me a hotel", tools) == {"get_ride": 0.5,
                                                           "reserve_hotel": 1.5}
    assert description_hints("how are you", tools) == {}


@pytest.mark.parametrize(("utterance", "question"), [
    ("how do I set a timer on my microwave", True),
    ("Is it rude to play music on the train?", True),
    ("what's the weather like", True),
    ("does it rain a lot in Seattle", True),
    ("Jarvis, so how do people use wikipedia", True),  # a name or a filler first
    ("hey jarvis, look up the moon", False),
    ("look up the moon on wikipedia", False),
    ("can you play some jazz", False),  # asks for an action
    ("play music", False),
    ("", False),
])
def test_a_question_for_information_is_told_from_a_request(utterance: str,
                                                           question: bool) -> None:
    assert asks_for_information(utterance) is question


@pytest.mark.parametrize(("text", "searching"), [
    ("Can you find me some songs?", True),
    ("I'm looking for some music off the album Expectations.", True),
    ("look up the moon on wikipedia", True),
    ("lookup_song Search for a song", True),  # a tool's name and description
    ("look at the time", False),  # "look" alone is no search
    ("play some music", False),
    ("Find", True),
    ("", False),
])
def test_a_verb_of_searching_is_heard(text: str, searching: bool) -> None:
    assert says_searching(text) is searching


@pytest.mark.parametrize(("utterance", "rest"), [
    ("hey jarvis, will it rain tomorrow", "will it rain tomorrow"),
    ("Jarvis: is the shop open", "is the shop open"),
    ("ok so, did my parcel come", "did my parcel come"),
    ("heyday of jazz", "heyday of jazz"),  # a word that only begins like one
    ("will it snow, jarvis", "will it snow, jarvis"),  # only the words before
])
def test_the_words_that_lead_in_are_left_off(utterance: str, rest: str) -> None:
    assert after_lead_ins(utterance) == rest
