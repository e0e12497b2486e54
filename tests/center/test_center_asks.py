"""A required value nobody said is asked for, never passed on (scripted LLM: protocol tests).

The scripted backend plays a model that invents values, as small models do; the center
must turn an invented required value into a question, and let derived values through.
"""

from __future__ import annotations

import json
from typing import Any

from center_helpers import conversation_id, function_tool

from jarvis.center.dates import dates_heard
from jarvis.center.llm.scripted import ScriptedBackend, tool_call

GET_RIDE = function_tool(
    "get_ride",
    {"destination": {"type": "string", "description": "Where the cab goes"},
     "number_of_riders": {"type": "integer", "description": "Number of riders"},
     "shared_ride": {"type": "boolean", "description": "Whether the ride is shared"}},
    ["destination", "number_of_riders"],
    "Call a taxi to a destination",
)
CHECK_BALANCE = function_tool(
    "check_balance",
    {"account_type": {"type": "string", "enum": ["checking", "savings"]}},
    ["account_type"],
    "Check the balance of a bank account",
)
SET_TIMER = function_tool(
    "set_timer", {"duration_seconds": {"type": "integer", "description": "Length in seconds"}},
    ["duration_seconds"], "Start a countdown timer",
)
SET_VOLUME = function_tool(
    "set_volume",
    {"level": {"type": "integer", "minimum": 0, "maximum": 100, "description": "0-100"}},
    ["level"], "Set the speaker volume",
)


def _args(reply: dict[str, Any]) -> dict[str, Any]:
    return json.loads(reply["tool_calls"][0]["function"]["arguments"])


def test_an_invented_required_value_is_asked_for_then_the_answer_fills_it(
        make_center: Any) -> None:
    backend = ScriptedBackend([
        tool_call("get_ride", destination="Los Angeles", number_of_riders=1),
        tool_call("get_ride", destination="the airport", number_of_riders=1),
        tool_call("get_ride", destination="the airport", number_of_riders=2),
    ])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [GET_RIDE])

    asked = center.command(cid, "I need a cab please")
    assert asked["stop_reason"] == "validation_required"
    assert asked["tool_calls"] is None  # the invented call never reaches the node
    request = asked["validation_request"]
    assert (request["tool_name"], request["parameter_name"]) == ("get_ride", "destination")
    assert asked["assistant_message"] == "What destination should I use?"

    # "a cab" is no number of riders: asked next, once the destination was said.
    riders = center.answer(cid, "to the airport")
    assert riders["validation_request"]["parameter_name"] == "number_of_riders"
    done = center.answer(cid, "two of us")
    assert done["stop_reason"] == "tool_calls"
    assert _args(done) == {"destination": "the airport", "number_of_riders": 2}


RENT_CAR = function_tool(
    "rent_car",
    {"city": {"type": "string", "description": "City to pick the car up in"},
     "pickup_date": {"type": "string", "description": "Day of pickup"},
     "return_date": {"type": "string", "description": "Day of return"}},
    ["city", "pickup_date", "return_date"], "Rent a car",
)


def test_a_day_said_once_is_no_second_date(make_center: Any) -> None:
    pickup = dates_heard("march 9th", "UTC")[0][0][:10]
    back = dates_heard("march 12th", "UTC")[0][0][:10]
    backend = ScriptedBackend([
        tool_call("rent_car", city="Denver", pickup_date=pickup, return_date=pickup),
        tool_call("rent_car", city="Denver", pickup_date=pickup, return_date=back),
    ])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [RENT_CAR])
    asked = center.command(cid, "rent me a car in Denver on March 9th")
    assert asked["stop_reason"] == "validation_required"
    assert asked["validation_request"]["parameter_name"] == "return_date"
    done = center.answer(cid, "March 12th")
    assert _args(done) == {"city": "Denver", "pickup_date": pickup, "return_date": back}


def test_a_missing_required_value_is_asked_for_without_a_retry(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("get_ride", number_of_riders=2)])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [GET_RIDE])
    asked = center.command(cid, "get a cab for 2 people")
    assert asked["validation_request"]["parameter_name"] == "destination"
    assert len(backend.requests) == 1  # no retry that would have the model make one up


def test_a_choice_nobody_said_is_asked_with_its_options(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("check_balance", account_type="checking"),
                               tool_call("check_balance", account_type="savings")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [CHECK_BALANCE])
    asked = center.command(cid, "what's my balance")
    assert asked["validation_request"]["options"] == ["checking", "savings"]
    assert asked["assistant_message"] == "Which account type: checking or savings?"
    said = center.command(conversation_id_started(center, [CHECK_BALANCE]),
                          "how much is in my savings account")
    assert said["stop_reason"] == "tool_calls"


def test_values_derived_from_what_was_said_pass(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("set_timer", duration_seconds=600),
                               tool_call("set_timer", duration_seconds=1800),
                               tool_call("set_volume", level=100)])
    center = make_center(backend)
    timer = conversation_id_started(center, [SET_TIMER, SET_VOLUME])
    assert _args(center.command(timer, "set a 10 minute timer")) == {"duration_seconds": 600}
    half = conversation_id_started(center, [SET_TIMER, SET_VOLUME])
    assert _args(center.command(half, "timer for half an hour")) == {"duration_seconds": 1800}
    loud = conversation_id_started(center, [SET_TIMER, SET_VOLUME])
    assert _args(center.command(loud, "turn the volume up to max")) == {"level": 100}


def test_an_answer_without_the_value_is_asked_again_once_then_let_go(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("check_balance", account_type="checking")] * 6)
    center = make_center(backend)
    cid = conversation_id_started(center, [CHECK_BALANCE])
    assert center.command(cid, "what's my balance")["stop_reason"] == "validation_required"
    # The answer names no option: the model's choice would be made up, so it is asked again.
    again = center.answer(cid, "the usual one")
    assert again["stop_reason"] == "validation_required"
    assert again["assistant_message"].startswith("Sorry, I didn't catch that. Which account")
    assert _args(center.answer(cid, "checking please")) == {"account_type": "checking"}
    # Two answers without it: no call is sent with a value nobody gave.
    other = conversation_id_started(center, [CHECK_BALANCE])
    center.command(other, "what's my balance")
    center.answer(other, "the usual one")
    given_up = center.answer(other, "you know which")
    assert given_up["stop_reason"] == "complete" and given_up["tool_calls"] is None
    assert "didn't catch the account type" in given_up["assistant_message"]


def conversation_id_started(center: Any, tools: list[dict[str, Any]]) -> str:
    cid = conversation_id()
    center.start(cid, tools)
    return cid


def test_a_plain_tools_own_words_are_its_keywords(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("get_ride", destination="the airport",
                                         number_of_riders=2)])
    center = make_center(backend)
    cid = conversation_id_started(center, [GET_RIDE, SET_TIMER])
    center.command(cid, "call a taxi to the airport for 2 of us")
    # Words of its name and description heard; a tool none of whose words was heard is
    # left out (its description is no full list of the words people use for it).
    assert backend.requests[0].tool_hints == {"get_ride": 1.0}  # "taxi"


def test_optional_values_nobody_asked_for_are_left_out(make_center: Any) -> None:
    backend = ScriptedBackend([
        tool_call("get_ride", destination="the airport", number_of_riders=2, shared_ride=False),
        tool_call("get_ride", destination="the airport", number_of_riders=2, shared_ride=True)])
    center = make_center(backend)
    plain = center.command(conversation_id_started(center, [GET_RIDE]),
                           "a taxi to the airport for 2 people")
    assert _args(plain) == {"destination": "the airport", "number_of_riders": 2}
    shared = center.command(conversation_id_started(center, [GET_RIDE]),
                            "a shared taxi to the airport for 2 people")
    assert _args(shared)["shared_ride"] is True


FIND_BUS = function_tool(
    "find_bus",
    {"from_location": {"type": "string", "description": "City of departure"},
     "to_location": {"type": "string", "description": "City of arrival"}},
    ["from_location", "to_location"],
    "Search for a bus itinerary between two cities",
)


def test_a_look_alike_tool_the_request_never_named_is_not_called(make_center: Any) -> None:
    # Scripted: the model reaches for a tool whose values all came from the request.
    clock = function_tool("get_time", {"city": {"type": "string"}}, [], "The time of day")
    backend = ScriptedBackend([tool_call("get_time"), tool_call("find_bus", from_location="Reno",
                                                                to_location="Fresno")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [FIND_BUS, clock])
    reply = center.command(cid, "Please help me get a cab")
    assert reply["stop_reason"] == "complete"
    assert reply["assistant_message"] == "Sorry, I can't help with that."
    assert reply["tool_calls"] is None
    # Two values the user said show a request of the tool's shape, though no word names it.
    other = conversation_id()
    center.start(other, [FIND_BUS, clock])
    called = center.command(other, "from Reno to Fresno")
    assert called["stop_reason"] == "tool_calls"
    assert called["tool_calls"][0]["function"]["name"] == "find_bus"


def test_the_models_own_choice_is_no_value_the_user_said(make_center: Any) -> None:
    # Scripted: the model sends a film request to a media command and picks its action; the
    # command's enum_synonyms make the action the model's reading, not a value said.
    media = {"command_name": "media", "description": "Control the speakers.", "parameters": [
        {"name": "action", "type": "string", "required": True, "enum_values": ["play", "pause"],
         "enum_synonyms": {"play": ["put on"], "pause": ["hold"]}},
        {"name": "query", "type": "string", "description": "What to play"}]}
    backend = ScriptedBackend([tool_call("media", action="play", query="Anthony Maras films"),
                               tool_call("media", action="play", query="Anthony Maras films")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[media])
    reply = center.command(cid, "Find me Anthony Maras films")
    assert reply["stop_reason"] == "complete"
    assert reply["assistant_message"] == "Sorry, I can't help with that."
    assert reply["tool_calls"] is None
    # Said, the choice is part of a request of the command's shape.
    other = conversation_id()
    center.start(other, commands=[media])
    called = center.command(other, "Put on Anthony Maras films")
    assert called["stop_reason"] == "tool_calls"
    assert _args(called) == {"action": "play", "query": "Anthony Maras films"}


def test_nothing_is_asked_about_a_tool_the_request_never_named(make_center: Any) -> None:
    # The model picks the only look-alike tool for a request no command serves.
    backend = ScriptedBackend([tool_call("find_bus"), tool_call("find_bus")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [FIND_BUS])
    reply = center.command(cid, "I need a dentist")
    assert reply["stop_reason"] == "complete"
    assert reply["assistant_message"] == "Sorry, I can't help with that."
    assert reply["validation_request"] is None and reply["tool_calls"] is None
    # Named in any word of its declaration, the same call is asked about.
    other = conversation_id()
    center.start(other, [FIND_BUS])
    asked = center.command(other, "I need a bus")
    assert asked["stop_reason"] == "validation_required"
    assert asked["validation_request"]["parameter_name"] == "from_location"
