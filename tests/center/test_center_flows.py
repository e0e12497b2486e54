"""End-to-end conversation flows over real HTTP with a scripted LLM (protocol tests)."""

from __future__ import annotations

import json
from typing import Any

from center_helpers import (
    CALCULATOR_COMMAND,
    CALENDAR_COMMAND,
    EVENTS_COMMAND,
    WEATHER_TOOL,
    conversation_id,
    function_tool,
)

from jarvis.center.llm.base import LLMRequest
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call, tool_calls


def _roles(request: LLMRequest) -> list[str]:
    return [m["role"] for m in request.messages]


def _contents(request: LLMRequest) -> str:
    return "\n".join(str(m.get("content")) for m in request.messages)


def _retry_notes(backend: ScriptedBackend) -> list[str]:
    """The newest retry message of each LLM request after the first."""
    return [
        [m["content"] for m in r.messages
         if m["role"] == "system" and "NOT run" in m["content"]][-1]
        for r in backend.requests[1:]
    ]


def _add(center: Any, cid: str, said: str, result: int) -> None:
    """One calculator exchange answered by the node: `said`, then its result."""
    call = center.command(cid, said)["tool_calls"][0]
    center.results(cid, (call["id"], {"success": True, "message": f"That is {result}",
                                      "context": {"result": result}, "wait_for_input": True}))


def test_a_value_copied_from_an_older_result_is_asked_for(make_center: Any) -> None:
    # The scripted model copies 8, the first exchange's result, into the third request;
    # only the last result (30) is what "that" can mean there.
    backend = ScriptedBackend(
        [tool_call("calculate", num1=5, num2=3, operation="add"),
         tool_call("calculate", num1=10, num2=20, operation="add"),
         tool_call("calculate", num1=8, num2=2, operation="multiply"),
         tool_call("calculate", num1=30, num2=2, operation="multiply")]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[CALCULATOR_COMMAND])
    _add(center, cid, "What's 5 plus 3?", 8)
    _add(center, cid, "And 10 plus 20?", 30)

    asked = center.command(cid, "Now multiply that by 2")
    assert asked["stop_reason"] == "validation_required"
    assert asked["validation_request"]["parameter_name"] == "num1"
    assert asked["tool_calls"] is None
    done = center.answer(cid, "the last result")
    assert json.loads(done["tool_calls"][0]["function"]["arguments"]) == {
        "num1": 30, "num2": 2, "operation": "multiply"}


def _copies_the_last_question(request: LLMRequest) -> Any:
    """A scripted model that answers with the last question of the conversation."""
    asked = [m["content"] for m in request.messages
             if m["role"] == "assistant" and str(m.get("content") or "").endswith("?")]
    return text(asked[-1])


def test_a_question_asked_before_is_no_answer_to_a_new_request(make_center: Any) -> None:
    backend = ScriptedBackend(
        [tool_call("create_event", title="Dentist"),
         tool_call("create_event", title="Dentist", start="2026-03-02T09:00:00+01:00"),
         _copies_the_last_question]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[CALENDAR_COMMAND], timezone="Europe/Berlin")
    asked = center.command(cid, "put the dentist in my calendar")
    assert asked["stop_reason"] == "validation_required"
    call = center.answer(cid, "March 2nd at 9 in the morning")["tool_calls"][0]
    center.results(cid, (call["id"], {"success": True, "message": "Added the dentist.",
                                      "wait_for_input": True}))

    reply = center.command(cid, "what is the square root of 144")
    assert reply["stop_reason"] == "complete"
    assert reply["assistant_message"] == "Sorry, I can't help with that."
    assert reply["assistant_message"] != asked["assistant_message"]


def _city_missing(call_id: str) -> tuple[str, dict[str, Any]]:
    """The node's validation error for a call without the city it needs."""
    return (call_id, {"success": False, "message": "Which city?",
                      "context": {"_validation_error": True, "errors": [
                          {"param_name": "city", "message": "Which city?"}]}})


def test_a_value_the_node_needs_and_the_call_lacks_is_asked_at_once(
        make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("open_weather_command"),
                               tool_call("open_weather_command", city="Oslo"),
                               tool_call("open_weather_command", city="Atlantis"),
                               tool_call("open_weather_command", city="Oslo")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    call = center.command(cid, "what's the weather")["tool_calls"][0]
    asked = center.results(cid, _city_missing(call["id"]))
    assert asked["stop_reason"] == "validation_required"
    assert asked["validation_request"]["parameter_name"] == "city"
    assert len(backend.requests) == 1  # no retry: nobody said a city
    center.answer(cid, "Oslo")

    # A value the call held and the node refused is retried as before.
    call = center.command(cid, "and in atlantis")["tool_calls"][0]
    retried = center.results(cid, _city_missing(call["id"]))
    assert retried["stop_reason"] == "tool_calls" and len(backend.requests) == 4


def test_a_new_request_takes_no_value_from_the_request_before(make_center: Any) -> None:
    # The scripted model copies the city of the request before into each later one.
    backend = ScriptedBackend([tool_call("open_weather_command", city="Oslo")] * 3)
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])

    def asked_for(said: str) -> dict[str, Any]:
        call = center.command(cid, said)["tool_calls"][0]
        center.results(cid, (call["id"], {"success": True, "message": "Mild."}))
        return dict(json.loads(call["function"]["arguments"]))

    assert asked_for("what's the weather in Oslo") == {"city": "Oslo"}
    # A request that goes on from the last one keeps what that one said.
    assert asked_for("and tomorrow?") == {"city": "Oslo"}
    # A request of its own: the weather here, not in Oslo.
    assert asked_for("what's the weather") == {}


BOOK_TABLE = function_tool(
    "book_table", {"restaurant": {"type": "string"}, "time": {"type": "string"}},
    ["restaurant"], "Book a table at a restaurant")


def test_the_call_after_an_answer_keeps_the_values_given_before(make_center: Any) -> None:
    # The model puts the answer into the restaurant's name too; the node had refused a
    # call that named the restaurant the user said.
    backend = ScriptedBackend([tool_call("book_table", restaurant="Luigi's"),
                               tool_call("book_table", restaurant="at 7 pm", time="19:00")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [BOOK_TABLE])
    call = center.command(cid, "book a table at Luigi's")["tool_calls"][0]
    asked = center.results(cid, (call["id"], {
        "success": False, "message": "What time?", "context": {
            "_validation_error": True,
            "errors": [{"param_name": "time", "message": "What time?"}]}}))
    assert asked["validation_request"]["parameter_name"] == "time"
    [booked] = center.answer(cid, "at 7 pm")["tool_calls"]
    assert json.loads(booked["function"]["arguments"]) == {"restaurant": "Luigi's",
                                                           "time": "19:00"}


def test_the_nodes_question_is_asked_once_more_then_let_go(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("open_weather_command")] * 3)
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    said = []
    reply = center.command(cid, "what's the weather this weekend")
    for answer in ("how do I make pancakes", "no idea"):
        call = reply["tool_calls"][0]
        said.append(center.results(cid, _city_missing(call["id"]))["assistant_message"])
        reply = center.answer(cid, answer)
        assert reply["stop_reason"] == "tool_calls"
    said.append(center.results(cid, _city_missing(reply["tool_calls"][0]["id"]))[
        "assistant_message"])
    assert said == ["What city should I use?",
                    "Sorry, I didn't catch that. What city should I use?",
                    "Sorry, I still didn't catch the city, so I left it there."]


WATER = function_tool(
    "water_garden", {"zone": {"type": "string"}, "minutes": {"type": "integer"}},
    ["zone", "minutes"], "Turn on the sprinklers in one zone for some minutes")


def test_a_value_answered_stays_when_the_next_is_asked_for(make_center: Any) -> None:
    # The model writes a made-up zone once the minutes are answered; the zone answered
    # first stands.
    backend = ScriptedBackend([tool_call("water_garden"),
                               tool_call("water_garden", zone="vegetable bed", minutes=10),
                               tool_call("water_garden", zone="front", minutes=5)])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WATER])
    assert center.command(cid, "water the garden")["assistant_message"] == (
        "What zone should I use?")
    assert center.answer(cid, "the vegetable bed")["assistant_message"] == "How many minutes?"
    [call] = center.answer(cid, "for 5 minutes")["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"zone": "vegetable bed", "minutes": 5}


def test_the_nodes_question_is_worded_by_the_parameters_kind(make_center: Any) -> None:
    # Optional in the schema, needed by the node all the same.
    optional = function_tool("water_garden", {"zone": {"type": "string"},
                                              "minutes": {"type": "integer"}}, ["zone"])
    center = make_center(ScriptedBackend([tool_call("water_garden", zone="front lawn")]))
    cid = conversation_id()
    center.start(cid, [optional])
    call = center.command(cid, "water the front lawn")["tool_calls"][0]
    asked = center.results(cid, (call["id"], {"success": False, "message": "How long?",
                                              "context": {"_validation_error": True, "errors": [
                                                  {"param_name": "minutes"}]}}))
    assert asked["assistant_message"] == "How many minutes?"


def test_weather_flow_llm_words_the_result(make_center: Any) -> None:
    backend = ScriptedBackend(
        [tool_call("open_weather_command", city="Miami"), text("It's 73 and sunny in Miami.")]
    )
    center = make_center(backend)
    cid = conversation_id()
    assert center.start(cid, [WEATHER_TOOL]).json() == {"status": "success", "conversation_id": cid}

    reply = center.command(cid, "What's the weather like in Miami?")
    assert reply["stop_reason"] == "tool_calls"
    assert reply["request_information"] == {
        "voice_command": "What's the weather like in Miami?", "conversation_id": cid,
    }
    assert reply["commands"] == [] and reply["validation_request"] is None
    [call] = reply["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "open_weather_command"
    assert json.loads(call["function"]["arguments"]) == {"city": "Miami"}

    # Context only, no message: the LLM words the answer, with tools switched off.
    done = center.results(cid, (call["id"], {"success": True, "context": {"temp_f": 73}}))
    assert done["stop_reason"] == "complete"
    assert done["assistant_message"] == "It's 73 and sunny in Miami."
    assert done["tool_calls"] is None
    wording = backend.requests[1]
    assert wording.tools_disabled is True and wording.tools == []
    tool_msgs = [m for m in wording.messages if m["role"] == "tool"]
    assert tool_msgs[0]["tool_call_id"] == call["id"]
    assert json.loads(tool_msgs[0]["content"])["context"] == {"temp_f": 73}

    # The first request: stable system prompt first, per-turn context last, tools native.
    first = backend.requests[0]
    assert _roles(first) == ["system", "user", "system"]
    assert "open_weather_command" in first.messages[0]["content"]
    assert "2026" in first.messages[-1]["content"] or "Now:" in first.messages[-1]["content"]
    names = [t["function"]["name"] for t in first.tools]
    assert "open_weather_command" in names and "resolve_relative_date" in names


def test_direct_tool_message_skips_second_llm_call(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("open_weather_command", city="Miami")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    call = center.command(cid, "weather in miami")["tool_calls"][0]
    done = center.results(
        cid, (call["id"], {"success": True, "message": "It's 73° and sunny in Miami."})
    )
    assert done["stop_reason"] == "complete"
    assert done["assistant_message"] == "It's 73° and sunny in Miami."
    assert len(backend.requests) == 1  # no wording call
    assert center.store.turns(cid)[-1]["trace"]["direct_message"] is True


def test_direct_message_off_and_llm_wording_go_through_the_llm(make_center: Any) -> None:
    backend = ScriptedBackend(
        [tool_call("open_weather_command", city="Oslo"), text("Cold in Oslo: minus two.")]
    )
    center = make_center(backend, direct_tool_message=False)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    call = center.command(cid, "weather in oslo")["tool_calls"][0]
    done = center.results(cid, (call["id"], {"success": True, "message": "-2C in Oslo"}))
    assert done["assistant_message"] == "Cold in Oslo: minus two."
    assert len(backend.requests) == 2

    # llm_wording=True asks for the LLM even with direct mode on.
    backend2 = ScriptedBackend(
        [tool_call("open_weather_command", city="Rome"), text("Rome is warm today.")]
    )
    center2 = make_center(backend2)
    cid2 = conversation_id()
    center2.start(cid2, [WEATHER_TOOL])
    call = center2.command(cid2, "weather in rome")["tool_calls"][0]
    done = center2.results(
        cid2, (call["id"], {"success": True, "message": "25C", "llm_wording": True})
    )
    assert done["assistant_message"] == "Rome is warm today."


def test_failed_tool_result_is_spoken_directly_or_explained(make_center: Any) -> None:
    backend = ScriptedBackend(
        [tool_call("open_weather_command", city="Atlantis"),
         tool_call("open_weather_command", city="Atlantis"),
         text("I couldn't find Atlantis, sorry.")]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    call = center.command(cid, "weather in atlantis")["tool_calls"][0]
    done = center.results(cid, (call["id"], {"success": False, "message": "Unknown city."}))
    assert (done["stop_reason"], done["assistant_message"]) == ("complete", "Unknown city.")

    # A failure without a message goes to the LLM, which explains it.
    call = center.command(cid, "weather in atlantis again")["tool_calls"][0]
    done = center.results(cid, (call["id"], {"success": False, "context": {"code": 404}}))
    assert done["assistant_message"] == "I couldn't find Atlantis, sorry."


def test_calculator_multi_turn_sees_the_first_turn(make_center: Any) -> None:
    backend = ScriptedBackend(
        [
            tool_call("calculate", num1=5, num2=3, operation="add"),
            tool_call("calculate", num1=8, num2=2, operation="multiply"),
        ]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[CALCULATOR_COMMAND])

    first = center.command(cid, "What's 5 plus 3?")
    call = first["tool_calls"][0]
    done = center.results(
        cid,
        (call["id"], {"success": True, "message": "5 plus 3 equals 8", "context": {"result": 8},
                      "wait_for_input": True}),
    )
    assert done["assistant_message"] == "5 plus 3 equals 8"

    second = center.command(cid, "Now multiply that by 2")
    assert second["request_information"]["voice_command"] == "Now multiply that by 2"
    assert json.loads(second["tool_calls"][0]["function"]["arguments"]) == {
        "num1": 8, "num2": 2, "operation": "multiply",
    }
    request = backend.requests[1]
    history = request.messages[1:-1]
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant", "user"]
    assert history[0]["content"] == "What's 5 plus 3?"
    assert history[1]["tool_calls"][0]["id"] == call["id"]
    assert json.loads(history[2]["content"])["context"] == {"result": 8}
    assert history[3]["content"] == "5 plus 3 equals 8"
    assert history[4]["content"] == "Now multiply that by 2"
    # The command's description, rules, critical rules and antipatterns are in the prompt.
    system = request.messages[0]["content"]
    for expected in ("Do arithmetic on two numbers.", "Use the previous result",
                     "Never compute the answer yourself", "convert_units",
                     "what is 2 plus 2", "one of: add, subtract, multiply, divide"):
        assert expected in system
    # The stable part is identical across turns (KV-cache reuse).
    assert backend.requests[0].messages[0] == request.messages[0]


def test_invalid_datetime_is_retried_with_a_message_naming_the_parameter(
    make_center: Any,
) -> None:
    backend = ScriptedBackend(
        [
            tool_call("create_event", title="Dentist", start="tomorrow at 3"),
            tool_call("create_event", title="Dentist", start="2026-01-19 15:00"),
            tool_call("create_event", title="Dentist", start="2026-01-19T15:00:00-05:00"),
        ]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[CALENDAR_COMMAND])
    reply = center.command(cid, "add the dentist tomorrow at 3")
    assert reply["stop_reason"] == "tool_calls"
    args = json.loads(reply["tool_calls"][0]["function"]["arguments"])
    assert args["start"] == "2026-01-19T15:00:00-05:00"
    assert len(backend.requests) == 3

    retry = backend.requests[1].messages
    assert retry[-1]["role"] == "system" and "Now:" in retry[-1]["content"]
    retry_note = next(m["content"] for m in reversed(retry)
                      if m["role"] == "system" and "NOT run" in m["content"])
    assert "'start'" in retry_note and "ISO-8601" in retry_note
    assert "tomorrow at 3" in retry_note
    assert "resolve_relative_date" in retry_note
    # The bad attempt is shown to the LLM, but never reaches the node or the history.
    assert any(m.get("tool_calls") for m in retry if m["role"] == "assistant")
    history = center.store.history(center.store.load(cid))
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert json.loads(history[1]["tool_calls"][0]["function"]["arguments"])["start"].endswith(
        "-05:00"
    )
    trace = center.store.turns(cid)[-1]["trace"]
    assert [r["attempt"] for r in trace["retries"]] == [1, 2]
    assert trace["retries"][0]["problems"][0]["parameter"] == "start"


def test_retries_exhausted_on_one_parameter_asks_the_user(make_center: Any) -> None:
    bad = tool_call("create_event", title="Dentist", start="someday")
    backend = ScriptedBackend(
        [bad, bad, bad,
         tool_call("create_event", title="Dentist", start="2026-03-02T09:00:00+01:00")]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[CALENDAR_COMMAND], timezone="Europe/Berlin")
    reply = center.command(cid, "dentist someday")
    assert reply["stop_reason"] == "validation_required"
    assert reply["validation_request"]["parameter_name"] == "start"
    assert reply["validation_request"]["question"] == reply["assistant_message"]
    assert reply["tool_calls"] is None
    assert len(backend.requests) == 3  # first try + 2 retries
    assert len(center.store.turns(cid)[-1]["trace"]["retries"]) == 3

    # The user's answer comes back into the same conversation as a user message.
    done = center.answer(cid, "March 2nd at 9 in the morning")
    assert done["stop_reason"] == "tool_calls"
    last = backend.requests[-1].messages
    assert last[-2] == {"role": "user", "content": "March 2nd at 9 in the morning"}
    assert last[-3]["role"] == "assistant" and last[-3]["content"] == reply["assistant_message"]


def test_retries_exhausted_on_several_parameters_is_an_error(make_center: Any) -> None:
    bad = tool_call("calculate", num1="five", num2="three", operation="add")
    backend = ScriptedBackend([bad, bad, bad])
    center = make_center(backend, max_retries=2)
    cid = conversation_id()
    center.start(cid, commands=[CALCULATOR_COMMAND])
    reply = center.command(cid, "five plus three")
    assert reply["stop_reason"] == "error"
    assert reply["assistant_message"]
    assert reply["tool_calls"] is None and reply["validation_request"] is None
    note = next(m["content"] for m in backend.requests[1].messages
                if "NOT run" in str(m["content"]))
    assert "'num1'" in note and "'num2'" in note and "a number" in note


def test_enum_artifacts_and_unknown_tools(make_center: Any) -> None:
    backend = ScriptedBackend(
        [
            tool_call("calculate", num1=1, num2=2, operation="power"),  # not in the enum
            tool_call("calculus", num1=1, num2=2),  # no such tool
            tool_calls(("calculate", '{"num1": 1, "num2": 2, "operation": ')),  # bad JSON
        ]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[CALCULATOR_COMMAND])
    reply = center.command(cid, "one to the power two")
    assert reply["stop_reason"] == "error"
    notes = _retry_notes(backend)
    assert "Valid values: add, subtract, multiply, divide" in notes[0]
    assert "there is no tool 'calculus'" in notes[1]

    # An optional parameter holding an LLM placeholder counts as left out: no retry.
    backend2 = ScriptedBackend([tool_call("create_event", title="Gym",
                                          start="2026-01-19T07:00:00Z", reminder="none")])
    center2 = make_center(backend2)
    cid2 = conversation_id()
    center2.start(cid2, commands=[CALENDAR_COMMAND])
    assert center2.command(cid2, "gym at 7")["stop_reason"] == "tool_calls"
    assert len(backend2.requests) == 1


def test_array_of_datetimes_from_available_commands(make_center: Any) -> None:
    backend = ScriptedBackend(
        [
            tool_call("get_calendar_events", resolved_datetimes="2026-01-18T05:00:00Z"),
            tool_call("get_calendar_events",
                      resolved_datetimes=["2026-01-18T05:00:00Z", "2026-01-19"]),
            tool_call("get_calendar_events",
                      resolved_datetimes=["2026-01-18T05:00:00Z", "2026-01-19T05:00:00Z"]),
        ]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[EVENTS_COMMAND])
    assert center.command(cid, "what's in the calendar this weekend")["stop_reason"] == "tool_calls"
    notes = _retry_notes(backend)
    assert "a list of an ISO-8601 date-time" in notes[0]
    assert "item 1" in notes[1]
    # The tool schema the LLM sees carries the types (format date-time inside an array).
    tool = next(t for t in backend.requests[0].tools
                if t["function"]["name"] == "get_calendar_events")
    prop = tool["function"]["parameters"]["properties"]["resolved_datetimes"]
    assert prop == {"type": "array", "items": {"type": "string", "format": "date-time"}}


def test_node_validation_error_lets_the_llm_retry(make_center: Any) -> None:
    lights = {
        "command_name": "control_light",
        "description": "Turn a light on or off.",
        "parameters": [{"name": "entity_id", "type": "string", "required": True},
                       {"name": "state", "type": "string", "enum_values": ["on", "off"]}],
    }
    backend = ScriptedBackend(
        [
            tool_call("control_light", entity_id="light.living", state="on"),
            tool_call("control_light", entity_id="light.living_room_main", state="on"),
        ]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[lights])
    call = center.command(cid, "turn on the living room light")["tool_calls"][0]
    validation_context = {
        "_validation_error": True,
        "errors": [{"param_name": "entity_id", "message": "Device 'light.living' not found",
                    "valid_values": None}],
        "valid_values": {"entity_id": ["light.living_room_main", "light.kitchen"]},
    }
    retry = center.results(
        cid, (call["id"], {"success": False, "message": "Device not found",
                           "context": validation_context})
    )
    assert retry["stop_reason"] == "tool_calls"
    assert retry["tool_calls"][0]["id"] != call["id"]
    assert json.loads(retry["tool_calls"][0]["function"]["arguments"])["entity_id"] == (
        "light.living_room_main"
    )
    seen = backend.requests[1]
    assert seen.tools_disabled is False
    tool_msg = next(m for m in seen.messages if m["role"] == "tool")
    assert "light.living_room_main" in tool_msg["content"]
    done = center.results(cid, (retry["tool_calls"][0]["id"],
                                {"success": True, "message": "Living room light on."}))
    assert done["assistant_message"] == "Living room light on."


def test_node_validation_error_then_llm_question_and_repeated_failures(make_center: Any) -> None:
    teams = {
        "command_name": "get_score",
        "description": "Latest score of a team.",
        "parameters": [{"name": "team", "type": "string", "required": True}],
    }
    backend = ScriptedBackend(
        [tool_call("get_score", team="Panthers"), text("Which Panthers do you mean?"),
         tool_call("get_score", team="Florida Panthers")]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[teams])
    call = center.command(cid, "score for the Panthers game")["tool_calls"][0]
    context = {"_validation_error": True,
               "errors": [{"param_name": "team", "message": "ambiguous team",
                           "valid_values": ["Florida Panthers", "Carolina Panthers"]}],
               "valid_values": {"team": ["Florida Panthers", "Carolina Panthers"]}}
    asked = center.results(cid, (call["id"], {"success": False, "context": context}))
    assert asked["stop_reason"] == "validation_required"
    assert asked["validation_request"] == {
        "question": "Which Panthers do you mean?", "parameter_name": "team",
        "options": ["Florida Panthers", "Carolina Panthers"], "tool_call_id": None,
        "tool_name": None,
    }
    again = center.answer(cid, "Florida Panthers")
    assert again["stop_reason"] == "tool_calls"
    assert backend.requests[-1].messages[-2]["content"] == "Florida Panthers"

    # The node keeps refusing: after max_retries the center asks the user itself.
    backend.add(tool_call("get_score", team="Florida Panthers"),
                tool_call("get_score", team="Florida Panthers"))
    call = again["tool_calls"][0]
    for _ in range(2):
        nxt = center.results(cid, (call["id"], {"success": False, "context": context}))
        assert nxt["stop_reason"] == "tool_calls"
        call = nxt["tool_calls"][0]
    final = center.results(cid, (call["id"], {"success": False, "context": context}))
    assert final["stop_reason"] == "validation_required"
    assert final["validation_request"]["parameter_name"] == "team"
    assert final["validation_request"]["options"] == ["Florida Panthers", "Carolina Panthers"]
    assert final["validation_request"]["tool_call_id"] == call["id"]
    assert final["validation_request"]["tool_name"] == "get_score"


def test_llm_asks_the_user_with_ask_user(make_center: Any) -> None:
    backend = ScriptedBackend(
        [
            tool_call("ask_user", question="Which city?", parameter_name="city",
                      options=["Paris", "Paris, Texas"]),
            tool_call("open_weather_command", city="Paris"),
        ]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    asked = center.command(cid, "weather in paris")
    assert asked["stop_reason"] == "validation_required"
    assert asked["assistant_message"] == "Which city?"
    assert asked["validation_request"]["options"] == ["Paris", "Paris, Texas"]
    assert asked["validation_request"]["parameter_name"] == "city"
    reply = center.answer(cid, "the one in France")
    assert reply["stop_reason"] == "tool_calls"
    roles = [(m["role"], m.get("content")) for m in backend.requests[1].messages[1:-1]]
    assert roles == [("user", "weather in paris"), ("assistant", "Which city?"),
                     ("user", "the one in France")]


def test_server_tool_resolve_relative_date_loops_back(make_center: Any) -> None:
    def use_resolved(request: LLMRequest) -> Any:
        result = json.loads(request.messages[-2]["content"])
        return tool_call("create_event", title="Dentist", start=result["datetimes"][0])

    backend = ScriptedBackend(
        [tool_call("resolve_relative_date", phrase="tomorrow at 3 pm"), use_resolved]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, commands=[CALENDAR_COMMAND], timezone="Asia/Tokyo")
    reply = center.command(cid, "dentist tomorrow at 3 pm")
    assert reply["stop_reason"] == "tool_calls"
    start = json.loads(reply["tool_calls"][0]["function"]["arguments"])["start"]
    assert start.endswith("T15:00:00+09:00")
    # Only the client call goes to the node; the server call stays in the history.
    assert [c["function"]["name"] for c in reply["tool_calls"]] == ["create_event"]
    history = center.store.history(center.store.load(cid))
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant"]
    trace = center.store.turns(cid)[-1]["trace"]
    assert trace["server_tools"][0]["name"] == "resolve_relative_date"

    # get_current_datetime, and a bounded number of server loops.
    looping = ScriptedBackend([tool_call("get_current_datetime")] * 10)
    center2 = make_center(looping, max_tool_loops=3)
    cid2 = conversation_id()
    center2.start(cid2, [WEATHER_TOOL], timezone="Europe/Paris")
    stuck = center2.command(cid2, "what time is it")
    assert stuck["stop_reason"] == "error"
    assert len(looping.requests) == 4
    info = json.loads(looping.requests[1].messages[-2]["content"])
    assert info["timezone"] == "Europe/Paris" and len(info["date"]) == 10


def test_plain_answer_and_new_command_abandons_pending_calls(make_center: Any) -> None:
    backend = ScriptedBackend(
        [tool_call("open_weather_command", city="Lima"), text("Hello! How can I help?")]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    call = center.command(cid, "weather in lima")["tool_calls"][0]
    hello = center.command(cid, "never mind, hello")
    assert (hello["stop_reason"], hello["assistant_message"]) == (
        "complete", "Hello! How can I help?"
    )
    # The unanswered call is closed in the history, so it stays well-formed.
    msgs = backend.requests[1].messages
    closing = next(m for m in msgs if m["role"] == "tool")
    assert closing["tool_call_id"] == call["id"]
    # Results for the abandoned call are refused now.
    response = center.client.post(
        "/api/v0/voice/command/continue",
        json={"conversation_id": cid,
              "tool_results": [{"tool_call_id": call["id"], "output": {"success": True}}]},
    )
    assert response.status_code == 400


def test_restarting_a_conversation_replaces_tools_and_keeps_history(make_center: Any) -> None:
    backend = ScriptedBackend([text("Hi there."), tool_call("calculate", num1=1, num2=1,
                                                            operation="add")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    center.command(cid, "hello")
    center.start(cid, commands=[CALCULATOR_COMMAND])
    reply = center.command(cid, "one plus one")
    assert reply["stop_reason"] == "tool_calls"
    second = backend.requests[1]
    names = {t["function"]["name"] for t in second.tools}
    assert "calculate" in names and "open_weather_command" not in names
    assert [m.get("content") for m in second.messages[1:3]] == ["hello", "Hi there."]


def test_the_llm_is_told_which_commands_and_dates_the_utterance_names(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("get_calendar_events"), text("Hello!")])
    center = make_center(backend)
    cid = conversation_id()
    events = {**EVENTS_COMMAND, "keywords": ["calendar", "events", "schedule"]}
    center.start(cid, commands=[events, CALCULATOR_COMMAND])
    center.command(cid, "whats on my calendar tomorrow, any events?")
    first = backend.requests[0]
    assert first.tool_hints == {"get_calendar_events": 2.0}
    [tomorrow] = first.date_hints
    assert len(tomorrow) == 1 and "T00:00:00" in tomorrow[0]
    # Small talk names no command and no date.
    center.command(conversation_id_and_start(center, [events]), "hello there")
    assert backend.requests[1].tool_hints == {"get_calendar_events": 0.0}
    assert backend.requests[1].date_hints == []


def test_a_question_can_name_a_command_too(make_center: Any) -> None:
    # "where is my package" asks a user's own tracking command, whatever its form.
    refusal = text("Sorry, I can't help with that.")
    backend = ScriptedBackend([refusal, refusal, text("Nothing.")])
    center = make_center(backend)
    tracking = {"command_name": "track_package", "description": "Where a parcel is now.",
                "parameters": [], "keywords": ["package", "parcel", "delivery"]}
    cid = conversation_id_and_start(center, [tracking])
    center.command(cid, "where is my package")
    assert backend.requests[0].tool_hints == {"track_package": 1.0}
    # Refused, a question about the user's own things the command means is asked again
    # for its call (refused once more here, the refusal stands).
    assert [r.must_call for r in backend.requests] == [False, True]
    center.command(cid, "who wrote hamlet")
    assert backend.requests[2].tool_hints == {"track_package": 0.0}


def conversation_id_and_start(center: Any, commands: list[dict[str, Any]]) -> str:
    cid = conversation_id()
    center.start(cid, commands=commands)
    return cid


def test_the_llm_reads_spoken_numbers_as_digits(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("calculate", num1=90, num2=312, operation="add")])
    center = make_center(backend)
    cid = conversation_id_and_start(center, [CALCULATOR_COMMAND])
    reply = center.command(cid, "what is ninety plus three hundred and twelve")
    # The client gets its own words back; only the LLM reads digits.
    assert reply["request_information"]["voice_command"] == (
        "what is ninety plus three hundred and twelve"
    )
    said = [m["content"] for m in backend.requests[0].messages if m["role"] == "user"]
    assert said == ["what is 90 plus 312"]


def test_spoken_numbers_can_stay_words(make_center: Any) -> None:
    backend = ScriptedBackend([text("Ninety it is.")])
    center = make_center(backend, digits_for_numbers=False)
    cid = conversation_id_and_start(center, [CALCULATOR_COMMAND])
    center.command(cid, "what is ninety plus three hundred and twelve")
    said = [m["content"] for m in backend.requests[0].messages if m["role"] == "user"]
    assert said == ["what is ninety plus three hundred and twelve"]


def _with_operation_synonyms(command: dict[str, Any]) -> dict[str, Any]:
    params = [dict(p) for p in command["parameters"]]
    for p in params:
        if p["name"] == "operation":
            p["enum_synonyms"] = {"multiply": ["times", "multiplied"], "add": ["plus"]}
    return {**command, "parameters": params}


def test_enum_synonyms_said_reach_the_llm_and_one_written_becomes_its_value(
    make_center: Any,
) -> None:
    # Scripted LLM: the protocol is under test. It writes the synonym, not the enum value.
    backend = ScriptedBackend([tool_call("calculate", num1=6, num2=7, operation="Times"),
                               tool_call("calculate", num1=6, num2=7, operation="power")])
    center = make_center(backend)
    cid = conversation_id_and_start(center, [_with_operation_synonyms(CALCULATOR_COMMAND)])
    reply = center.command(cid, "what's 6 times 7")
    assert backend.requests[0].choice_hints == {"calculate": {"operation": ["multiply"]}}
    # No retry was needed: the node is sent the value the synonym stands for.
    assert len(backend.requests) == 1
    [call] = reply["tool_calls"]
    assert json.loads(call["function"]["arguments"])["operation"] == "multiply"
    # A word that is no declared synonym is still an error the LLM is told about.
    cid = conversation_id_and_start(center, [_with_operation_synonyms(CALCULATOR_COMMAND)])
    center.command(cid, "six to the power of seven")
    assert backend.requests[-1].choice_hints == {}
    assert "'power' is not one of the valid values" in _contents(backend.requests[-1])


def test_malformed_enum_synonyms_are_refused_at_conversation_start(make_center: Any) -> None:
    center = make_center(ScriptedBackend([]))
    command = _with_operation_synonyms(CALCULATOR_COMMAND)
    command["parameters"][2]["enum_synonyms"] = {"multiply": "times"}  # not a list
    body = {"conversation_id": conversation_id(), "available_commands": [command]}
    response = center.client.post("/api/v0/conversation/start", json=body)
    assert response.status_code == 422
    assert "enum_synonyms" in response.text
