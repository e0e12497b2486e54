"""A tool is named by the words of its own declaration, or by nothing at all."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from center_helpers import function_tool

from jarvis.center.evocation import (
    EVOKED_BY_MEANING,
    NEAREST_TOOLS,
    WORDS_NEED_MEANING,
    among_the_nearest,
    declaration_words,
    distinct_values,
    evokes,
    values_heard,
    without_names,
)
from jarvis.center.toolspec import ToolSpec, build_catalog

FIND_BUS = function_tool(
    "find_bus",
    {"from_location": {"type": "string", "description": "City of departure"},
     "to_location": {"type": "string", "description": "City of arrival"},
     "fare_type": {"type": "string", "enum": ["economy", "flexible"]}},
    ["from_location", "to_location"],
    "Search for a bus itinerary between two cities",
)


def _spec(tool: dict[str, Any]) -> ToolSpec:
    return build_catalog([tool], None).tools[tool["function"]["name"]]


def test_a_declaration_gives_its_telling_words_not_its_plain_ones() -> None:
    found = declaration_words(_spec(FIND_BUS))
    assert {"bus", "itinerary", "departure", "arrival", "flexible", "cities"} <= found
    assert not {"find", "for", "the", "two", "between"} & found


def test_a_request_for_the_tool_names_it_in_any_of_its_words() -> None:
    spec = _spec(FIND_BUS)
    assert evokes("find me a bus to Fresno", spec)
    assert evokes("I want flexible tickets", spec)  # an enum value
    assert evokes("which buses leave tonight", spec)  # a plural


def test_a_request_for_something_else_does_not() -> None:
    spec = _spec(FIND_BUS)
    assert not evokes("I need a dentist", spec)
    assert not evokes("find me a sushi place", spec)


BOOK_APPOINTMENT = function_tool(
    "book_appointment",
    {"doctor_name": {"type": "string", "description": "Name of the doctor to book with"},
     "date": {"type": "string", "description": "Date of the appointment"}},
    ["doctor_name", "date"],
    "Book an appointment with a doctor",
)


def test_a_verb_any_request_uses_names_no_tool_alone() -> None:
    spec = _spec(BOOK_APPOINTMENT)
    assert "book" not in declaration_words(spec)
    assert not evokes("I'm looking to book a house", spec)
    assert not evokes("can you help me search for a round trip flight", spec)
    # What the request is about still names it, with the verb or without.
    assert evokes("book me a doctor for Tuesday", spec)
    assert evokes("I need an appointment", spec)


def test_a_tool_that_says_nothing_about_itself_is_always_named() -> None:
    bare = {"type": "function", "function": {"name": "do_it", "parameters": {
        "type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}}
    assert evokes("hello there", _spec(bare))


def test_a_call_holding_several_said_values_has_the_tools_shape() -> None:
    spec = _spec(FIND_BUS)
    assert not evokes("Fresno to Reno please", spec, values_said=1)
    assert evokes("Fresno to Reno please", spec, values_said=2)


def test_a_calls_shape_counts_only_for_a_tool_among_the_nearest_in_meaning() -> None:
    related = {"find_restaurants": 0.21, "get_cars": 0.62, "reserve_car": 0.58,
               "get_weather": 0.30}
    assert NEAREST_TOOLS == 3
    assert among_the_nearest("get_weather", related)
    assert not among_the_nearest("find_restaurants", related)
    assert among_the_nearest("find_restaurants", {})  # meaning not known: not weighed


def test_far_in_meaning_only_meaning_names_a_tool() -> None:
    spec = _spec(FIND_BUS)
    assert evokes("a bus to Reno", spec)
    assert not evokes("a bus to Reno", spec, near=False)
    assert not evokes("Fresno to Reno please", spec, values_said=2, near=False)
    assert evokes("Fresno to Reno please", spec, EVOKED_BY_MEANING, near=False)


def test_a_shared_word_names_only_a_tool_the_request_is_somewhat_near() -> None:
    spec = _spec(FIND_BUS)
    below = WORDS_NEED_MEANING - 0.01
    assert not evokes("a bus to Reno", spec, below)
    assert evokes("a bus to Reno", spec, WORDS_NEED_MEANING)
    assert evokes("a bus to Reno", spec)  # meaning not known: not weighed
    assert evokes("Fresno to Reno please", spec, below, values_said=2)  # values: as before
    # A command that declares keywords is named by its words as before: its author chose
    # the words people say for it.
    keyed = build_catalog([FIND_BUS], [{"command_name": "find_bus", "parameters": [],
                                        "description": "Search for a bus itinerary",
                                        "keywords": ["coach"]}]).tools["find_bus"]
    assert evokes("the coach to Reno", keyed, below)
    assert evokes("a bus to Reno", keyed, below)
    assert not evokes("a train to Reno", keyed, below)


def test_values_that_name_one_day_are_one_thing_said() -> None:
    now = datetime.fromisoformat("2019-03-01T10:00:00-08:00")
    zone = "America/Los_Angeles"
    # "reserve a car from March 2nd" beside a home-visit tool: the day went in twice.
    copied = {"property_name": "March 2nd", "visit_date": "2019-03-02"}
    assert distinct_values(copied, zone, now) == 1
    two_days = {"pickup_date": "2019-03-02", "dropoff_date": "the 9th", "city": "LA"}
    assert distinct_values(two_days, zone, now) == 3
    assert distinct_values({"title": "dentist", "when": "tomorrow at 3"}, zone, now) == 2
    assert distinct_values(["not", "an", "object"]) == 0


def test_a_choice_or_a_yes_no_counts_as_said_only_where_its_words_were() -> None:
    spec = _spec(function_tool(
        "media",
        {"action": {"type": "string", "enum": ["play", "pause"]},
         "query": {"type": "string"}, "shuffle": {"type": "boolean"}},
        ["action"], "Play music",
    ))
    call = {"action": "play", "query": "ones Anthony Maras directs", "shuffle": True}
    # The model's own choices for a request about films: only the copied words remain.
    assert values_heard(call, spec, "Find me a movie. I like the ones Anthony Maras directs") \
        == {"query": "ones Anthony Maras directs"}
    assert values_heard(call, spec, "play the ones Anthony Maras directs") \
        == {"action": "play", "query": "ones Anthony Maras directs"}
    assert values_heard(["not", "an", "object"], spec, "play") == {}


def test_a_request_is_weighed_without_the_names_its_call_took_from_it() -> None:
    bus = _spec(FIND_BUS)
    said = "I need a bus from Fresno Central Station to San Diego, economy please."
    call = {"from_location": "Fresno Central Station", "to_location": "San Diego",
            "fare_type": "economy"}
    # A choice among options is no name: it tells what kind of thing is asked for.
    assert without_names(said, call, bus) == "I need a bus from to economy please."
    assert without_names(said, {}, bus) == said
    assert without_names(said, "not a call", bus) == said
