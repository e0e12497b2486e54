"""Streaming through the OpenAI-compatible backend: a fake server streams the wording of
a tool result and holds its last piece back, so the test sees the first sentence reach
the node while the LLM has not finished."""

from __future__ import annotations

import json
from typing import Any

import pytest
from center_helpers import WEATHER_TOOL, conversation_id
from fake_openai import FakeOpenAI, completion
from stream_helpers import CONTINUE, open_stream, results_body

from jarvis.center.llm.base import LLMBadResponseError, LLMRequest, LLMTimeoutError
from jarvis.center.llm.openai import OpenAIBackend
from jarvis.center.llm.openai_stream import StreamedReply

RESULT = {"success": True, "context": {"temperature_c": 20}, "llm_wording": True}


def test_the_first_sentence_arrives_before_the_answer_is_written(make_center: Any) -> None:
    with FakeOpenAI() as fake:
        fake.plan.append(("json", completion(calls=[("open_weather_command", {"city": "Oslo"})])))
        fake.plan.append(("stream", ["It is 20 ", "degrees in Oslo. ", "Rain is ", "likely",
                                     "."]))
        center = make_center(OpenAIBackend(base_url=fake.url, timeout=20))
        cid = conversation_id()
        center.start(cid, [WEATHER_TOOL])
        assert center.command(cid, "weather in Oslo")["tool_calls"][0]["id"] == "call_0"
        with open_stream(center, CONTINUE, results_body(cid, ("call_0", RESULT))) as (
                response, events):
            assert response.status_code == 200
            first = next(events)
            assert first == ("sentence", {"text": "It is 20 degrees in Oslo."})
            assert not fake.last_sent.is_set()  # the model is still writing
            fake.release.set()
            rest = list(events)
    assert rest[0] == ("sentence", {"text": "Rain is likely."})
    assert rest[1][0] == "done"
    assert rest[1][1]["assistant_message"] == "It is 20 degrees in Oslo. Rain is likely."
    assert fake.requests[-1]["body"]["stream"] is True


def test_a_server_that_does_not_stream_is_handed_on_whole() -> None:
    with FakeOpenAI() as fake:
        fake.plan.append(("json", completion("Hi there. Bye.")))
        backend = OpenAIBackend(base_url=fake.url, timeout=10)
        pieces: list[str] = []
        reply = backend.stream(LLMRequest(messages=[{"role": "user", "content": "hi"}]),
                               pieces.append)
        backend.close()
    assert pieces == ["Hi there. Bye."] and reply.content == "Hi there. Bye."


def test_a_stream_past_the_deadline_times_out_and_sends_nothing_more() -> None:
    with FakeOpenAI() as fake:
        fake.plan.append(("stream", ["Hello. ", "Still ", "writing."]))  # never released
        backend = OpenAIBackend(base_url=fake.url, timeout=1.0)
        pieces: list[str] = []
        with pytest.raises(LLMTimeoutError):
            backend.stream(LLMRequest(messages=[{"role": "user", "content": "hi"}]),
                           pieces.append)
        got = list(pieces)
        fake.release.set()
        assert fake.last_sent.wait(5)
        backend.close()
    assert got == ["Hello. ", "Still "] and pieces == got


def _line(delta: dict[str, Any]) -> str:
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": delta}]})


def test_streamed_tool_calls_are_put_back_together() -> None:
    streamed = StreamedReply()
    lines = [
        _line({"role": "assistant", "content": None}),
        _line({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                               "function": {"name": "get_weather", "arguments": ""}}]}),
        _line({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]}),
        _line({"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]}),
        ": a comment", "", 'data: {"choices": [], "usage": {"total_tokens": 9}}',
        "data: [DONE]",
    ]
    assert [streamed.line(line) for line in lines] == [""] * len(lines)
    reply = streamed.reply()
    assert streamed.finished and reply.content is None and reply.usage == {"total_tokens": 9}
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("call_a", "get_weather", {"city": "Oslo"})]
    with pytest.raises(LLMBadResponseError):
        StreamedReply().line("data: {not json")
