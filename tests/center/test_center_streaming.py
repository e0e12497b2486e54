"""Streamed turns (`.../stream`) against a live center over HTTP.

The LLM is a scripted one that hands its text on word by word: these tests check the
protocol (the events, their order, errors, what is stored), not understanding. Each
streamed turn is compared with the same scripted turn through the plain endpoints.
"""

from __future__ import annotations

import json
from typing import Any

from center_helpers import WEATHER_TOOL, Center, conversation_id
from stream_helpers import (
    COMMAND,
    CONTINUE,
    answer_body,
    command_body,
    open_stream,
    results_body,
    stream,
)

from jarvis.center.llm.base import LLMReply, LLMTimeoutError, LLMToolCall
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.sentences import split_sentences
from jarvis.center.store import ConcurrentUpdateError

WORDING = ("It is 20 degrees in Oslo, says Dr. Frost. Rain is 3.5 times likelier "
           "tomorrow! Take a coat.")
SENTENCES = ["It is 20 degrees in Oslo, says Dr. Frost.", "Rain is 3.5 times likelier tomorrow!",
             "Take a coat."]
RESULT = {"success": True, "message": "20 C, rain likely", "llm_wording": True,
          "context": {"temperature_c": 20, "rain": "likely"}}


def _weather_turn() -> list[Any]:
    """A call of the weather tool (with a fixed id), then the LLM's wording of its result."""
    call = LLMToolCall("call_w1", "open_weather_command", json.dumps({"city": "Oslo"}))
    return [LLMReply(tool_calls=[call]), text(WORDING)]


def _same_conversation(body: dict[str, Any], cid: str) -> dict[str, Any]:
    return {**body, "request_information": {**body["request_information"],
                                            "conversation_id": cid}}


def _history(center: Center, cid: str) -> list[dict[str, Any]]:
    return center.store.history(center.store.load(cid))


def test_streamed_turns_equal_the_plain_ones(make_center: Any) -> None:
    center = make_center(ScriptedBackend([*_weather_turn(), *_weather_turn()]))
    plain, streamed = conversation_id(), conversation_id()
    for cid in (plain, streamed):
        center.start(cid, [WEATHER_TOOL])
    asked = center.command(plain, "weather in Oslo")
    answered = center.results(plain, ("call_w1", RESULT))

    events = stream(center, COMMAND, command_body(streamed, "weather in Oslo"))
    assert [name for name, _ in events] == ["tool_calls", "done"]
    assert events[0][1]["tool_calls"] == asked["tool_calls"] == events[1][1]["tool_calls"]
    assert _same_conversation(events[1][1], plain) == asked

    events = stream(center, CONTINUE, results_body(streamed, ("call_w1", RESULT)))
    assert events[-1][0] == "done"
    assert [data["text"] for name, data in events[:-1]] == SENTENCES
    assert {name for name, _ in events[:-1]} == {"sentence"}
    assert _same_conversation(events[-1][1], plain) == answered
    assert answered["assistant_message"] == WORDING
    assert _history(center, streamed) == _history(center, plain)


def test_an_answer_checked_whole_is_sent_once_it_passed(make_center: Any) -> None:
    # One claiming sentence turns the whole answer into the refusal: nothing of it leaves.
    center = make_center(ScriptedBackend([text("Hello! I've booked a table for you."),
                                          text("Lima is the capital of Peru. Nice, isn't it?")]))
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    events = stream(center, COMMAND, command_body(cid, "book a table"))
    assert events[0] == ("sentence", {"text": "Sorry, I can't help with that."})
    assert events[1][0] == "done" and events[1][1]["stop_reason"] == "complete"
    events = stream(center, COMMAND, command_body(cid, "capital of peru"))
    assert [d.get("text") for _, d in events[:-1]] == ["Lima is the capital of Peru.",
                                                        "Nice, isn't it?"]


def test_words_in_place_of_a_call_not_asked_for_are_checked_whole(make_center: Any) -> None:
    # A remark acted on is answered with the tools off; that answer is no wording of
    # results (nothing ran), so nothing of it leaves before it passed its checks.
    center = make_center(ScriptedBackend([
        tool_call("open_weather_command", city="Oslo"),
        text('Glad you liked it. {"name": "open_weather_command", "arguments": {}}')]))
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    events = stream(center, COMMAND, command_body(cid, "the pizza in Oslo was delicious"))
    done = events[-1][1]
    assert done["stop_reason"] == "complete"
    assert [d["text"] for _, d in events[:-1]] == split_sentences(done["assistant_message"])


def test_questions_and_llm_failures_end_in_done_alone(make_center: Any) -> None:
    def down(_request: Any) -> LLMReply:
        raise LLMTimeoutError("too slow")

    center = make_center(ScriptedBackend([tool_call("ask_user", question="Which city?"), down]))
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    events = stream(center, COMMAND, command_body(cid, "what's the weather"))
    assert [name for name, _ in events] == ["done"]
    assert events[0][1]["validation_request"]["question"] == "Which city?"
    events = stream(center, CONTINUE, answer_body(cid, "Oslo"))
    assert [name for name, _ in events] == ["done"]
    assert events[0][1]["stop_reason"] == "error"
    assert "took too long" in events[0][1]["assistant_message"]


def test_refused_requests_get_plain_errors(make_center: Any) -> None:
    center = make_center(ScriptedBackend([*_weather_turn()]), rate_limit_per_minute=1,
                         rate_limit_burst=2)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    refusals = [
        (COMMAND, command_body(conversation_id(), "hi"), 404),
        (COMMAND, {"conversation_id": cid}, 422),
        (CONTINUE, results_body(cid, ("call_unknown", RESULT)), 400),
        (COMMAND, command_body(cid, "hi"), 429),
    ]
    for path, body, status in refusals:
        with open_stream(center, path, body) as (response, _events):
            response.read()
        assert response.status_code == status, (path, body, response.text)
        assert response.headers["content-type"] == "application/json"
        assert response.json()["error"]
    assert "retry-after" in response.headers


def test_a_failure_after_the_first_sentence_is_an_error_event(make_center: Any) -> None:
    center = make_center(ScriptedBackend(_weather_turn()))
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    center.command(cid, "weather in Oslo")
    store = center.store
    before = _history(center, cid)

    def conflict(*_args: Any) -> None:
        raise ConcurrentUpdateError("changed meanwhile")

    store.commit = conflict  # another request stores its turn first
    try:
        events = stream(center, CONTINUE, results_body(cid, ("call_w1", RESULT)))
    finally:
        del store.commit
    assert [name for name, _ in events] == ["sentence", "sentence", "error"]
    error = events[-1][1]
    assert error["status"] == 409
    assert "changed by another request" in error["error"]
    assert _history(center, cid) == before
